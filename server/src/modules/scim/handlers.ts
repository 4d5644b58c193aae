/** SCIM operations: one handler per operationId. Successes and refusals alike are SCIM bodies (bare replies). */
import {
  tenantOf,
  thisServer,
  type BareReply,
  type Handler,
  type HandlerInput,
  type OperationId,
} from '../../http/index.js';
import { auditRead } from '../audit/index.js';
import { runBulk } from './bulk.js';
import { discoveryResource, resourceTypes, schemas, serviceProviderConfig } from './discovery.js';
import { errorReply, scimMediaType } from './errors.js';
import { listUsers } from './list.js';
import * as service from './service.js';
import { project } from './user.js';

function callerOf<Id extends OperationId>(input: HandlerInput<Id>): service.Caller {
  return {
    deps: input.deps,
    tenant: tenantOf(input.auth),
    base: `${thisServer(input.deps.config, input.headers.host)}/scim/v2`,
    // A keyed POST runs in the request's transaction (http/bind.ts).
    pinned: input.headers['idempotency-key'] !== undefined,
  };
}

const ok = (status: number, bare: unknown, headers?: Record<string, string>): BareReply => ({
  status,
  bare,
  contentType: scimMediaType,
  ...(headers ? { headers } : {}),
});

/** Runs a handler's work; a refusal becomes its SCIM error reply (replayed like any reply by the idempotency store). */
async function scim(work: () => Promise<BareReply>): Promise<BareReply> {
  try {
    return await work();
  } catch (error) {
    return errorReply(error);
  }
}

export const getScimServiceProviderConfig: Handler<'getScimServiceProviderConfig'> = async (input) =>
  ok(200, serviceProviderConfig(callerOf(input).base));

export const listScimResourceTypes: Handler<'listScimResourceTypes'> = async (input) =>
  ok(200, resourceTypes(callerOf(input).base));

export const listScimSchemas: Handler<'listScimSchemas'> = async (input) => ok(200, schemas(callerOf(input).base));

export const getScimResourceType: Handler<'getScimResourceType'> = (input) =>
  scim(async () => ok(200, discoveryResource(resourceTypes(callerOf(input).base), input.params.id, 'resource type')));

export const getScimSchema: Handler<'getScimSchema'> = (input) =>
  scim(async () => ok(200, discoveryResource(schemas(callerOf(input).base), input.params.id, 'schema')));

// An identity provider's lookups read people's names and addresses: audited like the API's reads of respondents.
export const listScimUsers: Handler<'listScimUsers'> = (input) =>
  scim(async () => {
    const list = await listUsers(callerOf(input), input.query);
    if (list.Resources.length > 0)
      await auditRead(input, {
        action: 'scim_users.read',
        target: { type: 'scim_users', id: null },
      });
    return ok(200, list);
  });

export const createScimUser: Handler<'createScimUser'> = (input) =>
  scim(async () => {
    const done = await service.createUser(callerOf(input), input.body);
    return ok(201, done.user, { ETag: done.etag, Location: done.user.meta!.location! });
  });

export const getScimUser: Handler<'getScimUser'> = (input) =>
  scim(async () => {
    const done = await service.getUser(callerOf(input), input.params.id);
    await auditRead(input, {
      action: 'scim_users.read',
      target: { type: 'scim_user', id: input.params.id },
    });
    return ok(200, project(done.user, input.query.attributes, input.query.excludedAttributes), { ETag: done.etag });
  });

export const replaceScimUser: Handler<'replaceScimUser'> = (input) =>
  scim(async () => {
    const done = await service.replaceUser(callerOf(input), input.params.id, input.body, input.headers['if-match']);
    return ok(200, done.user, { ETag: done.etag });
  });

export const patchScimUser: Handler<'patchScimUser'> = (input) =>
  scim(async () => {
    const done = await service.patchUser(callerOf(input), input.params.id, input.body, input.headers['if-match']);
    return ok(200, done.user, { ETag: done.etag });
  });

export const deleteScimUser: Handler<'deleteScimUser'> = (input) =>
  scim(async () => {
    await service.deleteUser(callerOf(input), input.params.id, input.headers['if-match']);
    return ok(204, undefined);
  });

export const submitScimBulk: Handler<'submitScimBulk'> = (input) =>
  scim(async () => ok(200, await runBulk(callerOf(input), input.body as never)));
