/**
 * The manager hierarchy's one rule on writes: no write may close a loop of managers (someone their own manager,
 * at any depth). A `managerId` equal to the person's own `externalId` is no loop: HR systems mark the top of the
 * tree that way, so it is stored as given and read as "no manager" (`managerOf`). The writer (`writeRespondents`)
 * asks here before every write, for every caller: PUT answers the refusal as its 400, a sync as that record's
 * error, and other modules (SCIM) map `ManagerLoopError` to theirs.
 *
 * Only a record whose manager changes can close a loop (a new record, or a new `managerId`). For those, the
 * writer takes a per-tenant transaction lock before it reads the chains above their new managers, so two writes
 * that would each close half of one loop (A under B, B under A) are checked one after the other, never against
 * the same old state. The lock is taken before the write's row locks, in every transaction that takes it, so it
 * cannot deadlock with them. A write that changes no manager takes no lock and reads no chain. The parallel batches
 * of one incremental sync share the lock among themselves (`ParallelManagerEdges`).
 */
import { sql } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import { ApiError } from '../../http/index.js';

const shown = (id: string) => (id.length > 60 ? `${id.slice(0, 60)}…` : id);

/**
 * A write refused because it would make the respondent their own manager, directly or through others: a loop of
 * managers. Its code on the wire is the contract's `manager_cycle` (a cycle in this code is a survey cycle).
 */
export class ManagerLoopError extends ApiError {
  constructor(
    readonly externalId: string,
    readonly managerId: string,
    /** The loop the write would close: the respondent, their new manager, … back to the respondent. */
    readonly loop: readonly string[],
  ) {
    const through =
      loop.length <= 8 ? loop.map(shown) : [...loop.slice(0, 4).map(shown), '…', ...loop.slice(-3).map(shown)];
    const message = `managerId "${shown(managerId)}" would make ${shown(externalId)} their own manager (${through.join(' → ')}); a manager cannot report to someone in their own organization`;
    super(400, 'manager_cycle', message, [{ path: '/body/managerId', code: 'manager_cycle', message }]);
    this.name = 'ManagerLoopError';
  }
}

export interface ManagerEdge {
  externalId: string;
  managerId: string | null;
}

/**
 * Whom a person reports to: their `managerId`, or none when it names themselves (the top of the tree). The SQL
 * walks read it the same way: their guard against loops stops at a person already met, and a self-reference is
 * met at once (targeting `compileUnder`, `respondent_manager_chain`).
 */
const managerOf = (externalId: string, managerId: string | null): string | null =>
  managerId === externalId ? null : managerId;

/**
 * Serialises writes that change a tenant's manager edges (see the file's comment). A replace sync takes it when it
 * begins, before any of its row locks, since any of its batches may change a manager. `shared`: the parallel batch
 * transactions of one incremental sync, which order their checks among themselves (`ParallelManagerEdges`) and
 * together exclude every other writer.
 */
export async function lockManagerEdges(
  db: DbOrTx,
  tenant: Tenant,
  mode: 'exclusive' | 'shared' = 'exclusive',
): Promise<void> {
  const key = `respondents.managers:${tenant.organizationId}:${tenant.environment}`;
  await (
    mode === 'shared'
      ? sql`select pg_advisory_xact_lock_shared(hashtextextended(${key}, 0))`
      : sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`
  ).execute(db);
}

/** Runs one function at a time, in the order they were asked. */
class Gate {
  private last: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.last.then(fn);
    this.last = result.catch(() => undefined);
    return result;
  }
  /** Holds the gate until `release` is called. */
  async hold(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const entering = new Promise<void>((resolve) => (entered = resolve));
    void this.run(() => {
      entered();
      return held;
    });
    await entering;
    return release;
  }
}

/**
 * One incremental sync's batches, written by parallel transactions without giving up the hierarchy's rule. Each
 * batch takes the hierarchy's lock shared, so no other writer's change can land while one of them is open, and the
 * batches check their loops one at a time, in batch order, each against the committed chains plus the edges of
 * the job's batches still in flight (checked, not yet committed). A batch's commit and a check never overlap: a
 * check sees an earlier batch either in flight or committed, never between (when another writer could have
 * changed the same respondent). A dry run keeps every earlier batch's edges, since none is ever committed.
 *
 * A batch checked against an earlier one's edges commits only after that one has committed: were the earlier one
 * rolled back, its managers would stay as stored, and the later edges, accepted against the changed ones, could
 * close a loop with them. So the later batch rolls back too (`EarlierBatchRolledBack`), and the job's retry
 * checks both again. It waits before it records itself done: that update's lock on the job's row would make the
 * earlier batch wait for it.
 */
export class ParallelManagerEdges {
  private previous: Promise<void> = Promise.resolve();
  private readonly gate = new Gate();
  /** The accepted edges of each checked batch not yet ended, and whether it commits. */
  private readonly inFlight = new Map<
    number,
    { edges: ReadonlyMap<string, string | null>; committed: Promise<boolean> }
  >();
  private turns = 0;

  constructor(private readonly keepEdges: boolean) {}

  /** The next batch's turn; asked for in batch order. */
  nextTurn(): ManagerEdgesTurn {
    const id = this.turns++;
    const before = this.previous;
    let checked!: () => void;
    this.previous = new Promise<void>((resolve) => (checked = resolve));
    let ended!: (committed: boolean) => void;
    const committed = new Promise<boolean>((resolve) => (ended = resolve));
    let releaseCommit: (() => void) | undefined;
    let checkedAgainst: Promise<boolean>[] = [];
    const inFlight = this.inFlight;
    const gate = this.gate;
    const keep = this.keepEdges;
    return {
      skip: () => checked(),
      check: async (db, tenant, lock, walk) => {
        try {
          // The order matters: waiting for the earlier batch's check while holding the lock could wait on a writer
          // queued for it, which waits for this job's open batches.
          await before;
          if (lock) await lockManagerEdges(db, tenant, 'shared');
          return await gate.run(async () => {
            const overlay = new Map<string, string | null>();
            for (const batch of inFlight.values())
              for (const [person, manager] of batch.edges) overlay.set(person, manager);
            checkedAgainst = [...inFlight.values()].map((batch) => batch.committed);
            const { accepted, result } = await walk(overlay);
            inFlight.set(id, { edges: accepted, committed });
            return result;
          });
        } finally {
          checked();
        }
      },
      beforeCommit: async () => {
        if ((await Promise.all(checkedAgainst)).includes(false)) throw new EarlierBatchRolledBack();
        releaseCommit ??= await gate.hold();
      },
      end: (didCommit) => {
        checked();
        ended(didCommit);
        if (!keep) inFlight.delete(id);
        releaseCommit?.();
      },
    };
  }
}

/** A batch checked against the edges of an earlier one that rolled back: it must not commit without them. */
export class EarlierBatchRolledBack extends Error {
  constructor() {
    super('an earlier batch of this sync, whose manager changes this batch was checked against, rolled back');
  }
}

export interface ManagerEdgesTurn {
  /** The batch changes no manager: the next one need not wait for it. */
  skip(): void;
  check<T>(
    db: DbOrTx,
    tenant: Tenant,
    lock: boolean,
    walk: (
      inFlight: ReadonlyMap<string, string | null>,
    ) => Promise<{ accepted: Map<string, string | null>; result: T }>,
  ): Promise<T>;
  /**
   * Inside the batch's transaction, before it records itself done: waits until the earlier batches it was checked
   * against have ended, and throws `EarlierBatchRolledBack` if one did not commit. From here until `end` no check
   * runs.
   */
  beforeCommit(): Promise<void>;
  /** After the commit (`committed`) or the rollback. */
  end(committed: boolean): void;
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
  return new Map(rows.map((row) => [row.external_id, managerOf(row.external_id, row.manager_id)]));
}

/**
 * The stored manager of every respondent in the chains above `starts` (and of the starts themselves). UNION, not
 * UNION ALL: a pair already found is not walked again, so a loop written by SQL ends the walk.
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
  return new Map(rows.map((row) => [row.external_id, managerOf(row.external_id, row.manager_id)]));
}

/**
 * The records of `given` whose write would close a loop, each with its refusal. Records are taken in order, each
 * against the stored hierarchy with the earlier accepted ones applied, so the accepted ones together close none.
 * `appendOnly`: an `append` leaves existing respondents as they are, so only new ones count. `lock`: false for a
 * dry run, which writes nothing.
 */
export async function managerLoops(
  db: DbOrTx,
  tenant: Tenant,
  given: readonly ManagerEdge[],
  options: { appendOnly: boolean; lock: boolean; turn?: ManagerEdgesTurn | undefined },
): Promise<Map<string, ManagerLoopError>> {
  const refused = new Map<string, ManagerLoopError>();
  // Checked as the hierarchy reads them: someone who is their own manager has none.
  const edges = given.map(({ externalId, managerId }) => ({ externalId, managerId: managerOf(externalId, managerId) }));
  const managed = edges.filter((edge) => edge.managerId !== null);
  const stored =
    managed.length === 0
      ? new Map<string, string | null>()
      : await storedManagers(
          db,
          tenant,
          managed.map((edge) => edge.externalId),
        );
  const written = (edge: ManagerEdge) => !(options.appendOnly && stored.has(edge.externalId));
  const changes = (edge: ManagerEdge) =>
    edge.managerId !== null && written(edge) && stored.get(edge.externalId) !== edge.managerId;
  const changing = managed.filter(changes);
  if (changing.length === 0) {
    options.turn?.skip();
    return refused;
  }
  const walk = async (inFlight: ReadonlyMap<string, string | null>) => {
    // Read after the lock: the chains as the last write that changed them committed them, with the edges of
    // batches in flight beside them (their managers' chains are walked too).
    const starts = new Set(changing.map((edge) => edge.managerId!));
    for (const manager of inFlight.values()) if (manager !== null) starts.add(manager);
    const managerOf = await chainsAbove(db, tenant, [...starts]);
    for (const [id, manager] of inFlight) managerOf.set(id, manager);
    checkInOrder(managerOf);
    const accepted = new Map<string, string | null>();
    for (const edge of edges)
      if (written(edge) && !refused.has(edge.externalId)) accepted.set(edge.externalId, edge.managerId);
    return { accepted, result: refused };
  };
  if (options.turn) return options.turn.check(db, tenant, options.lock, walk);
  if (options.lock) await lockManagerEdges(db, tenant);
  return (await walk(new Map())).result;

  function checkInOrder(managerOf: Map<string, string | null>): void {
    for (const edge of edges) {
      const { externalId, managerId } = edge;
      if (!changes(edge)) {
        // Also a manager removed earlier in the same write: later records are checked against it.
        if (written(edge)) managerOf.set(externalId, managerId);
        continue;
      }
      const loop = [externalId];
      const seen = new Set<string>();
      let above: string | null | undefined = managerId;
      while (above !== null && above !== undefined && !seen.has(above)) {
        loop.push(above);
        if (above === externalId) break;
        seen.add(above);
        above = managerOf.get(above);
      }
      if (above === externalId) refused.set(externalId, new ManagerLoopError(externalId, managerId!, loop));
      else managerOf.set(externalId, managerId);
    }
  }
}
