/**
 * The SDK's SCIM methods against the real service: typed results (SCIM bodies are `application/scim+json`, which
 * the SDK reads as JSON), and SCIM errors as the SDK's typed errors with `scimType` as their code.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, NotFoundError, ValidationError, type SurveyServiceClient } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';
import { core, enterprise, own, patchOp, scimTenant } from './scim-helpers.js';

let t: TestService;
let client: SurveyServiceClient;
beforeAll(async () => {
  t = await startTestService();
  const tenant = await scimTenant(t);
  const key = await t.createKey(tenant.organizationId, { environment: 'LIVE', scopes: ['scim'] });
  client = createClient({ apiKey: key.key, baseUrl: t.url });
});
afterAll(async () => {
  await t?.close();
});

describe('client.scim', () => {
  it('creates, finds, patches and reads users with typed results', async () => {
    const created = await client.scim.users.create({
      schemas: [core, enterprise, own],
      userName: 'grace.hopper@example.com',
      externalId: 'E-grace',
      name: { givenName: 'Grace', familyName: 'Hopper' },
      [enterprise]: { department: 'Navy' },
      [own]: { attributes: { rank: 'admiral', level: 9 } },
    });
    expectTypeOf(created.id).toEqualTypeOf<string>();
    expect(created.id).toMatch(/^usr_/);
    expect(created.meta?.version).toMatch(/^W\//);

    const found = await client.scim.users.list({ filter: `${own}:attributes.level ge 9 and userName sw "grace"` });
    expectTypeOf(found.totalResults).toEqualTypeOf<number>();
    expect(found.totalResults).toBe(1);
    expect(found.Resources[0]!.id).toBe(created.id);

    const patched = await client.scim.users.patch(created.id, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    expect(patched.active).toBe(false);
    const read = await client.scim.users.get(created.id, { attributes: 'userName' });
    expect(read).toMatchObject({ id: created.id, userName: 'grace.hopper@example.com' });
    expect(read.name).toBeUndefined();
  });

  it('reads the discovery resources, one by one too', async () => {
    const config = await client.scim.serviceProviderConfig();
    expect(config.bulk.maxOperations).toBe(1000);
    const type = await client.scim.resourceType('User');
    expectTypeOf(type.endpoint).toEqualTypeOf<string>();
    expect(type.schemaExtensions?.map((e) => e.schema)).toEqual([enterprise, own]);
    const schema = await client.scim.schema(own);
    expect(schema.attributes.map((a) => a.name)).toEqual(['location', 'hireDate', 'employmentType', 'attributes']);
    expect((await client.scim.schemas()).totalResults).toBe(3);
  });

  it('throws SCIM errors as typed errors, the scimType as code and the detail as message', async () => {
    const missing = await client.scim.schema('urn:example:nothing').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toBe('No schema urn:example:nothing exists.');
    const invalid = await client.scim.users.list({ filter: 'userName eq' }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).code).toBe('invalidFilter');
    expect((invalid as ValidationError).message).toMatch(/^The filter is not valid SCIM/);
  });
});
