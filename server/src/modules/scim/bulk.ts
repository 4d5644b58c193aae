/**
 * `POST /Bulk` (RFC 7644 §3.7): each operation runs as its own unit, so a failure leaves the others in place;
 * `failOnErrors` stops the run after that many failures (what ran stays). `bulkId` references resolve in any
 * order: every POST's user id is chosen before the first operation runs, so `bulkId:x` — in a path or anywhere in a
 * value, such as `manager.value` — names that id whether its operation comes before or after.
 */
import { newId } from '../../lib/ids.js';
import { ScimError, errorReply, invalidValue } from './errors.js';
import { maxOperations } from './discovery.js';
import { createUser, deleteUser, patchUser, replaceUser, type Caller } from './service.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface OperationResult {
  method: string;
  bulkId?: string;
  version?: string;
  location?: string;
  status: string;
  response?: ReturnType<typeof errorReply>['bare'];
}

/** `bulkId:x` strings replaced by the ids they name, anywhere in `value`. */
function resolveReferences(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string' && value.startsWith('bulkId:')) {
    const id = ids.get(value.slice('bulkId:'.length));
    if (!id) throw new ScimError(409, 'invalidValue', `${value.slice(0, 100)} names no POST of this request.`);
    return id;
  }
  if (Array.isArray(value)) return value.map((item) => resolveReferences(item, ids));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveReferences(v, ids)]));
  return value;
}

export async function runBulk(caller: Caller, body: { Operations: unknown[]; failOnErrors?: number }) {
  const operations = body.Operations;
  if (operations.length > maxOperations)
    throw new ScimError(
      413,
      'tooMany',
      `A bulk request holds at most ${maxOperations} operations, not ${operations.length}.`,
    );
  const ids = new Map<string, string>();
  const known = new Map<string, string>();
  for (const operation of operations) {
    if (!isObject(operation) || String(operation.method).toUpperCase() !== 'POST') continue;
    if (typeof operation.bulkId !== 'string' || ids.has(operation.bulkId)) continue;
    const id = newId('usr');
    ids.set(operation.bulkId, id);
    const externalId = isObject(operation.data) ? operation.data.externalId : undefined;
    known.set(id, typeof externalId === 'string' && externalId !== '' ? externalId : id);
  }
  const seen = new Set<string>();
  const results: OperationResult[] = [];
  let failures = 0;
  for (const operation of operations) {
    if (body.failOnErrors !== undefined && failures >= body.failOnErrors) break;
    const op = isObject(operation) ? operation : {};
    const method = typeof op.method === 'string' ? op.method.toUpperCase() : String(op.method);
    const bulkId = typeof op.bulkId === 'string' ? op.bulkId : undefined;
    try {
      const result = await runOne(caller, op, method, bulkId, ids, known, seen);
      results.push({ method, ...(bulkId ? { bulkId } : {}), ...result });
    } catch (error) {
      const reply = errorReply(error);
      failures += 1;
      results.push({ method, ...(bulkId ? { bulkId } : {}), status: String(reply.status), response: reply.bare });
    }
  }
  return { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkResponse'], Operations: results };
}

async function runOne(
  caller: Caller,
  op: Json,
  method: string,
  bulkId: string | undefined,
  ids: ReadonlyMap<string, string>,
  known: ReadonlyMap<string, string>,
  seen: Set<string>,
): Promise<Omit<OperationResult, 'method' | 'bulkId'>> {
  const path = typeof op.path === 'string' ? op.path : '';
  const version = typeof op.version === 'string' ? op.version : undefined;
  const data = resolveReferences(op.data, ids);
  if (method === 'POST') {
    if (path !== '/Users') throw new ScimError(400, 'invalidPath', 'A bulk POST goes to /Users.');
    if (bulkId === undefined) throw invalidValue('A bulk POST needs a bulkId.');
    if (seen.has(bulkId)) throw invalidValue(`The bulkId ${bulkId.slice(0, 100)} is used twice.`);
    seen.add(bulkId);
    const done = await createUser(caller, data, ids.get(bulkId), known);
    return { status: '201', location: done.user.meta!.location!, version: done.etag };
  }
  const match = /^\/Users\/([^/]+)$/.exec(path);
  if (!match) throw new ScimError(400, 'invalidPath', `${path.slice(0, 100) || 'An empty path'} is not /Users/{id}.`);
  const id = resolveReferences(decodeURIComponent(match[1]!), ids) as string;
  switch (method) {
    case 'PUT': {
      const done = await replaceUser(caller, id, data, version, known);
      return { status: '200', location: done.user.meta!.location!, version: done.etag };
    }
    case 'PATCH': {
      const done = await patchUser(caller, id, data, version, known);
      return { status: '200', location: done.user.meta!.location!, version: done.etag };
    }
    case 'DELETE':
      await deleteUser(caller, id, version);
      return { status: '204' };
    default:
      throw invalidValue("A bulk operation's method is POST, PUT, PATCH or DELETE.");
  }
}
