/** Discovery (RFC 7643 §5–7): what this server supports, its resource type and its schemas. */
import { coreSchema, enterpriseSchema, ownSchema } from './attributes.js';
import { ScimError } from './errors.js';
import { maxResults } from './list.js';

export const maxOperations = 1000;
export const maxPayloadSize = 1024 * 1024;

const listOf = <Resource extends { id: string }>(resources: Resource[]) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources,
});

export function serviceProviderConfig(base: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: `${base.replace(/\/scim\/v2$/, '')}/docs#tag/SCIM`,
    patch: { supported: true },
    bulk: { supported: true, maxOperations, maxPayloadSize },
    filter: { supported: true, maxResults },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'API key',
        description:
          'A Survey Service API key with the scope scim, sent as Authorization: Bearer svc_live_… or svc_test_….',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string) {
  return listOf([
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A respondent: a person surveys can reach.',
      schema: coreSchema,
      schemaExtensions: [
        { schema: enterpriseSchema, required: false },
        { schema: ownSchema, required: false },
      ],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
  ]);
}

type Attribute = Record<string, unknown>;
const attribute = (name: string, extra: Attribute = {}): Attribute => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export function schemas(base: string) {
  const schema = (id: string, name: string, description: string, attributes: Attribute[]) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  });
  return listOf([
    schema(coreSchema, 'User', 'A respondent', [
      attribute('id', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
      attribute('externalId', {
        caseExact: true,
        mutability: 'immutable',
        description: "The respondent's externalId; the user's id when the client sends none.",
      }),
      attribute('userName', { required: true, uniqueness: 'server' }),
      attribute('name', {
        type: 'complex',
        subAttributes: [attribute('givenName'), attribute('familyName')],
      }),
      attribute('emails', {
        type: 'complex',
        multiValued: true,
        description:
          'Every address is kept with its type and primary. The primary one, else the first of type work, else the first, is the address distributions use; a user may have none.',
        subAttributes: [
          attribute('value'),
          attribute('type', { canonicalValues: ['work', 'home', 'other'] }),
          attribute('primary', { type: 'boolean' }),
          attribute('display'),
        ],
      }),
      attribute('title'),
      attribute('active', { type: 'boolean' }),
      attribute('preferredLanguage'),
    ]),
    schema(enterpriseSchema, 'EnterpriseUser', 'Enterprise User', [
      attribute('department'),
      attribute('employeeNumber'),
      attribute('manager', {
        type: 'complex',
        description:
          "The manager's externalId (a user's id is read as that user's externalId); the user's own marks the top of the tree.",
        subAttributes: [attribute('value', { caseExact: true })],
      }),
    ]),
    schema(ownSchema, 'SurveyServiceUser', 'The respondent fields SCIM has no attribute for', [
      attribute('location'),
      attribute('hireDate', {
        description:
          'A date, YYYY-MM-DD; a SCIM dateTime (2008-01-23T04:56:22Z) is accepted and kept as its date in UTC.',
      }),
      attribute('employmentType', {
        caseExact: true,
        canonicalValues: ['full_time', 'part_time', 'contractor', 'temporary', 'intern'],
      }),
      attribute('attributes', {
        type: 'complex',
        description:
          'Custom attributes, as the respondent keeps them: any key of A-Z a-z 0-9 _ (compared exactly) to a string, number, boolean or null. Filters name a key as attributes.<key>.',
      }),
    ]),
  ]);
}

/**
 * One discovery resource by its id (RFC 7644 §4: `/ResourceTypes/{id}`, `/Schemas/{id}`), the same object its list
 * holds. Ids compare case-insensitively, as names and URNs do in SCIM (RFC 7643 §2.1, RFC 8141); none is 404.
 */
export function discoveryResource<Resource extends { id: string }>(
  list: { Resources: Resource[] },
  id: string,
  kind: 'resource type' | 'schema',
): Resource {
  const found = list.Resources.find((resource) => resource.id.toLowerCase() === id.toLowerCase());
  if (!found)
    throw new ScimError(404, undefined, `No ${kind} ${id.length > 120 ? `${id.slice(0, 120)}…` : id} exists.`);
  return found;
}
