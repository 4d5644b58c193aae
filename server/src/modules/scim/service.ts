/**
 * Users = respondents, one population: every respondent is a user, however it was written (the respondents'
 * writer gives each its `scim_users` row, unless SCIM writes it: respondents/scim-users.ts), and SCIM finds, links
 * and changes the people an HR system wrote.
 * Each change is written through the respondents module's one writer (`upsertRespondent`, the code path of
 * `PUT /respondents/{externalId}`: the same checks, events and analytics) and the SCIM row beside it, in one unit
 * (unit.ts); a deletion is the respondents module's `deleteRespondent`, which removes the SCIM row with it.
 */
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { ApiError } from '../../http/index.js';
import { newId } from '../../lib/ids.js';
import { deleteRespondent, upsertRespondent } from '../respondents/index.js';
import { ScimError, invalidValue, mutability, uniqueness, userNotFound } from './errors.js';
import { applyPatch } from './patch.js';
import * as repo from './repository.js';
import { inUnit, type UnitContext } from './unit.js';
import { readUser, render, weakEtag, type ScimUser, type StoredUser, type UserInput } from './user.js';

export interface Caller extends UnitContext {
  tenant: Tenant;
  /** `…/scim/v2`, where `meta.location` points. */
  base: string;
}

export const locationOf = (caller: Caller, id: string) => `${caller.base}/Users/${encodeURIComponent(id)}`;

/** A user's reply: the rendered user and its version (the `ETag`). */
export interface Written {
  user: ScimUser;
  etag: string;
  created: boolean;
}

const looksLikeUserId = (value: string) => /^usr_[0-9A-Z]{26}$/.test(value);

export async function getUser(caller: Caller, id: string): Promise<Written> {
  const row = looksLikeUserId(id) ? await repo.findUser(caller.deps.db, caller.tenant, id) : undefined;
  if (!row) throw userNotFound(id);
  return written(caller, row, false);
}

function written(caller: Caller, row: StoredUser, created: boolean): Written {
  return { user: render(row, locationOf(caller, row.id)), etag: weakEtag(row.version), created };
}

/** `If-Match`: `*`, or one of the listed versions (weak comparison, RFC 9110 §13.1.1). */
function checkIfMatch(ifMatch: string | undefined, row: StoredUser): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (tags.includes('*') || tags.includes(`"${row.version}"`)) return;
  throw new ScimError(412, undefined, `The user's version is ${weakEtag(row.version)}, not ${ifMatch.slice(0, 100)}.`);
}

/**
 * A `manager.value` that names a SCIM user by `id` (`usr_…`, or a bulk operation's user) means that user's
 * externalId; any other value is an externalId, kept as it is even when nobody has it yet.
 */
async function managerExternalId(
  db: DbOrTx,
  tenant: Tenant,
  value: string | null | undefined,
  known: ReadonlyMap<string, string>,
): Promise<string | null | undefined> {
  if (!value || !looksLikeUserId(value)) return value;
  return known.get(value) ?? (await repo.externalIdsOf(db, tenant, [value])).get(value) ?? value;
}

/**
 * Writes the respondent; true when it was created. The respondents module's refusals (its record checks, a manager
 * loop) are invalid values in SCIM.
 */
async function writeRespondent(db: Db, tenant: Tenant, externalId: string, input: UserInput): Promise<boolean> {
  try {
    return (await upsertRespondent(db, tenant, externalId, input.respondent, 'by caller')).created;
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      const details = (error.details ?? []).map((d) => `${d.path?.replace(/^\/body\//, '') ?? ''} ${d.message}`.trim());
      throw invalidValue(details.length > 0 ? details.join('; ') : error.message);
    }
    throw error;
  }
}

const shown = (value: string) => value.slice(0, 100);

/**
 * userName and externalId are another user's (any user: every respondent is one). A new user also may not be a
 * respondent already known by its address: a `POST` whose userName or designated address is a respondent's e-mail
 * address is that person, whom the identity provider links (finds by a filter, then updates) instead of copying.
 */
async function assertUnique(
  db: DbOrTx,
  tenant: Tenant,
  input: UserInput,
  externalId: string,
  id: string,
  creating: boolean,
) {
  const nameHolder = await repo.holderOf(db, tenant, 'user_name', input.userName, id);
  if (nameHolder)
    throw uniqueness(
      `The userName ${shown(input.userName)} is the user ${nameHolder}'s in this organization and environment.`,
    );
  const keyHolder = await repo.holderOf(db, tenant, 'external_id', externalId, id);
  if (keyHolder)
    throw uniqueness(
      `The externalId ${shown(externalId)} is the user ${keyHolder}'s in this organization and environment.`,
    );
  if (!creating) return;
  const email = input.respondent.email;
  for (const address of new Set([email, input.userName.includes('@') ? input.userName : null])) {
    if (!address) continue;
    const holder = await repo.userWithEmail(db, tenant, address);
    if (holder)
      throw uniqueness(
        `${shown(address)} is the e-mail address of the user ${holder} in this organization and environment: link that user instead of creating another.`,
      );
  }
}

/** A unique index refused a concurrent twin (userName or externalId): the same 409 as the check before. */
function uniqueViolation(error: unknown): never {
  if ((error as { code?: string })?.code === '23505')
    throw uniqueness('The userName or externalId was taken by a concurrent request.');
  throw error;
}

/**
 * Creates a user. Without `externalId`, the respondent's externalId is the user's `id`. `presetId` and `known` are
 * a bulk request's: the id its bulkId resolves to, and the externalIds of the users it creates.
 */
export async function createUser(
  caller: Caller,
  body: unknown,
  presetId?: string,
  known: ReadonlyMap<string, string> = new Map(),
): Promise<Written> {
  const input = readUser(body);
  const id = presetId ?? newId('usr');
  if (input.id !== undefined && input.id !== id) throw mutability('id is assigned by the service; leave it out.');
  const externalId = input.externalId ?? id;
  return inUnit(caller, async (db) => {
    await assertUnique(db, caller.tenant, input, externalId, id, true);
    input.respondent.managerId = await managerExternalId(db, caller.tenant, input.respondent.managerId, known);
    // A respondent written under this externalId since the check (a PUT, a sync) is someone this user may not take
    // over: the unit rolls back.
    if (!(await writeRespondent(db, caller.tenant, externalId, input)))
      throw uniqueness(`The externalId ${shown(externalId)} was taken by a concurrent request.`);
    await repo.insertUser(db, caller.tenant, { ...scimRow(input), id, externalId });
    const row = await repo.findUser(db, caller.tenant, id);
    return written(caller, row!, true);
  }).catch(uniqueViolation);
}

function scimRow(input: UserInput) {
  return {
    userName: input.userName,
    active: input.active,
    preferredLanguage: input.preferredLanguage,
    employeeNumber: input.employeeNumber,
    emails: input.emails,
  };
}

async function change(
  caller: Caller,
  id: string,
  ifMatch: string | undefined,
  next: (current: StoredUser) => UserInput,
  known: ReadonlyMap<string, string> = new Map(),
): Promise<Written> {
  if (!looksLikeUserId(id)) throw userNotFound(id);
  return inUnit(caller, async (db) => {
    const current = await repo.findUser(db, caller.tenant, id, true);
    if (!current) throw userNotFound(id);
    checkIfMatch(ifMatch, current);
    const input = next(current);
    if (input.id !== undefined && input.id !== id) throw mutability('id cannot be changed.');
    if (input.externalId !== undefined && input.externalId !== current.external_id)
      throw mutability("externalId cannot be changed: it is the respondent's key.");
    await assertUnique(db, caller.tenant, input, current.external_id, id, false);
    input.respondent.managerId = await managerExternalId(db, caller.tenant, input.respondent.managerId, known);
    await writeRespondent(db, caller.tenant, current.external_id, input);
    await repo.updateUser(db, caller.tenant, { ...scimRow(input), id, externalId: current.external_id });
    const row = await repo.findUser(db, caller.tenant, id);
    return written(caller, row!, false);
  }).catch(uniqueViolation);
}

/** PUT: the body replaces every attribute a client may set. */
export function replaceUser(
  caller: Caller,
  id: string,
  body: unknown,
  ifMatch?: string,
  known?: ReadonlyMap<string, string>,
): Promise<Written> {
  return change(caller, id, ifMatch, () => readUser(body), known);
}

/** PATCH: the operations applied to the user as it is, then written like a PUT of the result. */
export function patchUser(
  caller: Caller,
  id: string,
  body: unknown,
  ifMatch?: string,
  known?: ReadonlyMap<string, string>,
): Promise<Written> {
  const operations = (body as { Operations?: unknown } | null)?.Operations;
  if (!Array.isArray(operations)) throw invalidValue('A PATCH needs Operations, an array.');
  return change(
    caller,
    id,
    ifMatch,
    (current) => {
      const doc = structuredClone(render(current, locationOf(caller, id))) as Record<string, unknown>;
      applyPatch(doc, operations);
      return readUser(doc);
    },
    known,
  );
}

/** DELETE: the respondent goes as `DELETE /respondents/{externalId}` removes it, and the SCIM row with it. */
export async function deleteUser(caller: Caller, id: string, ifMatch?: string): Promise<void> {
  if (!looksLikeUserId(id)) throw userNotFound(id);
  await inUnit(caller, async (db) => {
    const current = await repo.findUser(db, caller.tenant, id, true);
    if (!current) throw userNotFound(id);
    checkIfMatch(ifMatch, current);
    await deleteRespondent(db, caller.tenant, current.external_id);
  });
}
