/**
 * The manager hierarchy's one rule on writes: no write may close a cycle of managers (someone their own manager,
 * at any depth). The writer (`writeRespondents`) asks here before every write, for every caller: PUT answers the
 * refusal as its 400, a sync as that record's error, and other modules (SCIM) map `ManagerCycleError` to theirs.
 *
 * Only a record whose manager changes can close a cycle (a new record, or a new `managerId`). For those, the
 * writer takes a per-tenant transaction lock before it reads the chains above their new managers, so two writes
 * that would each close half of one cycle (A under B, B under A) are checked one after the other, never against
 * the same old state. The lock is taken before the write's row locks, in every transaction that takes it, so it
 * cannot deadlock with them. A write that changes no manager takes no lock and reads no chain.
 */
import { sql } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import { ApiError } from '../../http/errors.js';

const shown = (id: string) => (id.length > 60 ? `${id.slice(0, 60)}…` : id);

/** A write refused because it would make the respondent their own manager, directly or through others. */
export class ManagerCycleError extends ApiError {
  constructor(
    readonly externalId: string,
    readonly managerId: string,
    /** The cycle the write would close: the respondent, their new manager, … back to the respondent. */
    readonly cycle: readonly string[],
  ) {
    const through =
      cycle.length <= 8 ? cycle.map(shown) : [...cycle.slice(0, 4).map(shown), '…', ...cycle.slice(-3).map(shown)];
    const message = `managerId "${shown(managerId)}" would make ${shown(externalId)} their own manager (${through.join(' → ')}); a manager cannot report to someone in their own organization`;
    super(400, 'manager_cycle', message, [{ path: '/body/managerId', code: 'manager_cycle', message }]);
    this.name = 'ManagerCycleError';
  }
}

export interface ManagerEdge {
  externalId: string;
  managerId: string | null;
}

/**
 * Serialises writes that change a tenant's manager edges (see the file's comment). A replace sync takes it when it
 * begins, before any of its row locks, since any of its batches may change a manager.
 */
export async function lockManagerEdges(db: DbOrTx, tenant: Tenant): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`respondents.managers:${tenant.organizationId}:${tenant.environment}`}, 0))`.execute(
    db,
  );
}

/** The stored managers of `externalIds` (absent: no such respondent). */
async function storedManagers(
  db: DbOrTx,
  tenant: Tenant,
  externalIds: readonly string[],
): Promise<Map<string, string | null>> {
  const { rows } = await sql<{ external_id: string; manager_id: string | null }>`
    select external_id, manager_id from respondents
    where ${tenantIs(tenant)} and external_id = any(${[...externalIds]}::text[])`.execute(db);
  return new Map(rows.map((row) => [row.external_id, row.manager_id]));
}

/**
 * The stored manager of every respondent in the chains above `starts` (and of the starts themselves). UNION, not
 * UNION ALL: a pair already found is not walked again, so a cycle written by SQL ends the walk.
 */
async function chainsAbove(db: DbOrTx, tenant: Tenant, starts: readonly string[]): Promise<Map<string, string | null>> {
  const { rows } = await sql<{ external_id: string; manager_id: string | null }>`
    with recursive above (external_id, manager_id) as (
      select p.external_id, p.manager_id from respondents p
      where ${tenantIs(tenant, 'p')} and p.external_id = any(${[...starts]}::text[])
      union
      select p.external_id, p.manager_id from respondents p join above a on p.external_id = a.manager_id
      where ${tenantIs(tenant, 'p')}
    )
    select external_id, manager_id from above`.execute(db);
  return new Map(rows.map((row) => [row.external_id, row.manager_id]));
}

/**
 * The records of `edges` whose write would close a cycle, each with its refusal. Records are taken in order, each
 * against the stored hierarchy with the earlier accepted ones applied, so the accepted ones together close none.
 * `appendOnly`: an `append` leaves existing respondents as they are, so only new ones count. `lock`: false for a
 * dry run, which writes nothing.
 */
export async function managerCycles(
  db: DbOrTx,
  tenant: Tenant,
  edges: readonly ManagerEdge[],
  options: { appendOnly: boolean; lock: boolean },
): Promise<Map<string, ManagerCycleError>> {
  const refused = new Map<string, ManagerCycleError>();
  const managed = edges.filter((edge) => edge.managerId !== null);
  if (managed.length === 0) return refused;
  const stored = await storedManagers(
    db,
    tenant,
    managed.map((edge) => edge.externalId),
  );
  const written = (edge: ManagerEdge) => !(options.appendOnly && stored.has(edge.externalId));
  const changes = (edge: ManagerEdge) =>
    edge.managerId !== null && written(edge) && stored.get(edge.externalId) !== edge.managerId;
  const changing = managed.filter(changes);
  if (changing.length === 0) return refused;
  if (options.lock) await lockManagerEdges(db, tenant);
  // Read after the lock: the chains as the last write that changed them committed them.
  const managerOf = await chainsAbove(db, tenant, [...new Set(changing.map((edge) => edge.managerId!))]);
  for (const edge of edges) {
    const { externalId, managerId } = edge;
    if (!changes(edge)) {
      // Also a manager removed earlier in the same write: later records are checked against it.
      if (written(edge)) managerOf.set(externalId, managerId);
      continue;
    }
    const cycle = [externalId];
    const seen = new Set<string>();
    let above: string | null | undefined = managerId;
    while (above !== null && above !== undefined && !seen.has(above)) {
      cycle.push(above);
      if (above === externalId) break;
      seen.add(above);
      above = managerOf.get(above);
    }
    if (above === externalId) refused.set(externalId, new ManagerCycleError(externalId, managerId!, cycle));
    else managerOf.set(externalId, managerId);
  }
  return refused;
}
