/**
 * Citus tenant placement for operators — where an organization's rows live, moving it to a shard group of its own
 * online, the spread over nodes — used by the admin CLI's `tenants` commands (scripts/cli.ts). Nothing on the
 * request path imports this file.
 */
import { sql } from 'kysely';
import type { Db, DbOrTx } from './database.js';
import { hintShardStatistics, onCitus } from './citus.js';

/**
 * Tenant placement, for operators (the admin CLI's `tenants` commands). Every tenant table is co-located with
 * `surveys` (2026-11-26T0500), so one organization's rows of every table live in one *shard group*: the shards of
 * all those tables that cover the same range of hash values, on one node. The shard of `surveys` names the group.
 */

/** A tenant operation that cannot run here, and why (nothing was changed). */
export class TenantCommandRefused extends Error {}

/** An isolation that started and failed; it was rolled back and what it had made dropped (see isolateTenant). */
export class TenantIsolationFailed extends Error {}

/** Thrown by the functions below on a database without the `citus` extension. */
export class NotOnCitusError extends TenantCommandRefused {
  constructor() {
    super('This database is not a Citus coordinator (no "citus" extension): tenants live in one PostgreSQL.');
  }
}

async function requireCitus(db: DbOrTx): Promise<void> {
  if (!(await onCitus(db))) throw new NotOnCitusError();
}

/** Where one organization's rows live. */
export interface TenantPlacement {
  organizationId: string;
  /** The shard of `surveys` holding the organization, which names its shard group. */
  shardId: number;
  /** `host:port` of the node holding the group, and its Citus node id. */
  node: string;
  nodeId: number;
  /** The hash range the group covers; a single value once the organization is isolated. */
  hashRange: [number, number];
  isolated: boolean;
  /** The other organizations whose rows share the group (0 once isolated, barring a hash collision). */
  otherOrganizations: number;
  /** The shard of each co-located table, by table name. */
  shards: Record<string, number>;
}

/** Where `organizationId` lives. Throws NotOnCitusError off Citus. */
export async function tenantPlacement(db: DbOrTx, organizationId: string): Promise<TenantPlacement> {
  await requireCitus(db);
  const { rows } = await sql<{
    shard_id: number;
    node: string;
    node_id: number;
    hash_min: number;
    hash_max: number;
    other_organizations: number;
    shards: Record<string, number>;
  }>`
    with shard as (
      select s.shardid, s.shardminvalue::int as hash_min, s.shardmaxvalue::int as hash_max, p.colocationid
      from pg_dist_shard s join pg_dist_partition p using (logicalrelid)
      where s.shardid = get_shard_id_for_distribution_column('surveys', ${organizationId}::text)
    )
    select shard.shardid as shard_id, n.nodename || ':' || n.nodeport as node, n.nodeid as node_id,
           shard.hash_min, shard.hash_max,
           (select count(*)::int from organizations o
            where o.id <> ${organizationId} and get_shard_id_for_distribution_column('surveys', o.id) = shard.shardid)
             as other_organizations,
           (select jsonb_object_agg(s.logicalrelid::regclass::text, s.shardid)
            from pg_dist_shard s join pg_dist_partition p using (logicalrelid)
            where p.colocationid = shard.colocationid and s.shardminvalue::int = shard.hash_min
              and s.shardmaxvalue::int = shard.hash_max) as shards
    from shard
      join pg_dist_placement pl on pl.shardid = shard.shardid and pl.shardstate = 1
      join pg_dist_node n on n.groupid = pl.groupid`.execute(db);
  const row = rows[0];
  if (!row) throw new Error(`No placement of the shard of surveys for ${organizationId}`);
  return {
    organizationId,
    shardId: Number(row.shard_id),
    node: row.node,
    nodeId: row.node_id,
    hashRange: [row.hash_min, row.hash_max],
    isolated: row.hash_min === row.hash_max,
    otherOrganizations: row.other_organizations,
    shards: row.shards,
  };
}

/** The tenant tables without a primary key or replica identity: logical replication cannot replay their changes. */
export async function tablesWithoutReplicaIdentity(db: DbOrTx): Promise<string[]> {
  await requireCitus(db);
  const { rows } = await sql<{ table: string }>`
    select p.logicalrelid::regclass::text as table
    from pg_dist_partition p join pg_class c on c.oid = p.logicalrelid
    where p.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'surveys'::regclass)
      and (c.relreplident = 'n'
        or (c.relreplident = 'd' and not exists (
          select 1 from pg_constraint k where k.conrelid = c.oid and k.contype = 'p')))
    order by 1`.execute(db);
  return rows.map((row) => row.table);
}

export interface Isolation {
  before: TenantPlacement;
  after: TenantPlacement;
  /** False when the organization was already on a shard group of its own (nothing was done). */
  isolated: boolean;
  /** How: split onto another node (the default), or Citus's `isolate_tenant_to_new_shard` on the same node. */
  method: 'split' | 'isolate_tenant_to_new_shard' | null;
  durationMs: number;
}

export interface IsolateOptions {
  /** `host:port` of the node to put the new shard groups on; by default the worker with the fewest groups. */
  toNode?: string;
  /** Citus's `isolate_tenant_to_new_shard` instead, which keeps the groups on their node (see isolateTenant). */
  sameNode?: boolean;
  /** How often the watchdog looks at the new shards' replication (ms). */
  watchEveryMs?: number;
}

/**
 * Moves one organization's rows, in every tenant table, to a shard group of their own, without blocking its
 * reads or writes: the rows are copied and the changes made meanwhile replayed by logical replication
 * (`shard_transfer_mode => 'force_logical'`; the nodes need `wal_level = logical`, and every table a primary key
 * or replica identity, 2026-11-26T0600), then the new shards take over in one short metadata change. The other
 * organizations of the old group get two new groups beside it. Runs outside any transaction of the caller's (a Db):
 * the split works through connections of its own to the nodes. Takes seconds to minutes, with the group's size, and
 * first waits for every transaction open on the group's node to end (the replication slot's starting point).
 *
 * By default the group is split as `isolate_tenant_to_new_shard(…, 'CASCADE')` splits it (at the organization's
 * hash value, `citus_split_shard_by_split_points`), but onto another node: the worker with the fewest groups, or
 * `toNode`. Citus 13's `isolate_tenant_to_new_shard` always puts the new shards on the old group's node, and a
 * split whose new shards share the node with the old ones hangs for good when an UPDATE or DELETE of the group
 * commits between the creation of its replication slot and that of the new shards' primary keys (the decoder
 * describes the new shard as it was then, without a key, and the subscription's apply worker fails on every
 * retry: "publisher did not send replica identity column expected by the logical replication target relation";
 * citusdata/citus#6790, still open). Onto another node the decoder describes placeholder shards that got their
 * keys before the slot. `sameNode` uses `isolate_tenant_to_new_shard` all the same, for a quiet moment.
 *
 * A watchdog looks at the subscriptions of this database on every worker while the split runs: when their apply
 * workers keep failing (three errors), it cancels the split. A split that fails is rolled back (its metadata changes
 * are one transaction of the coordinator's), and what it had made is dropped (`citus_cleanup_orphaned_resources`)
 * before this throws.
 */
export async function isolateTenant(db: Db, organizationId: string, options: IsolateOptions = {}): Promise<Isolation> {
  const before = await tenantPlacement(db, organizationId);
  if (before.isolated) return { before, after: before, isolated: false, method: null, durationMs: 0 };
  const missing = await tablesWithoutReplicaIdentity(db);
  if (missing.length > 0) {
    throw new TenantCommandRefused(
      `Cannot isolate without blocking writes: ${missing.join(', ')} ha${missing.length === 1 ? 's' : 've'} no ` +
        'primary key or replica identity, so their UPDATEs and DELETEs would fail while the rows move.',
    );
  }
  let split;
  if (options.sameNode) {
    split = sql`
      select isolate_tenant_to_new_shard('surveys', ${organizationId}::text, 'CASCADE',
        shard_transfer_mode => 'force_logical')`;
  } else {
    const target = await targetNode(db, before, options.toNode);
    const { rows } = await sql<{ hash: number }>`select worker_hash(${organizationId}::text) as hash`.execute(db);
    const hash = rows[0]!.hash;
    const [min, max] = before.hashRange;
    // The bounds of the lower pieces, as isolate_tenant_to_new_shard computes them: [min, h-1], [h, h], [h+1, max].
    const points = hash === min ? [hash] : hash === max ? [hash - 1] : [hash - 1, hash];
    split = sql`
      select citus_split_shard_by_split_points(${before.shardId}::bigint, ${points.map(String)}::text[],
        ${points.map(() => target.nodeId).concat(target.nodeId)}::int[], shard_transfer_mode => 'force_logical')`;
  }
  const started = performance.now();
  try {
    await watched(db, options.watchEveryMs ?? 2_000, (connection) => split.execute(connection));
  } catch (error) {
    // What a failed split leaves (new shards, and on the workers a subscription, a replication slot that holds
    // WAL back, a publication, a role) is recorded in pg_dist_cleanup; the maintenance daemon drops it in time,
    // this at once.
    const cleanup = await sql`call citus_cleanup_orphaned_resources()`.execute(db).then(
      () => 'What the split had made is dropped.',
      (cleanupError: unknown) =>
        `Dropping what the split had made failed (${String(cleanupError)}): run CALL citus_cleanup_orphaned_resources().`,
    );
    const message = error instanceof Error ? error.message : String(error);
    throw new TenantIsolationFailed(`Isolation of ${organizationId} failed, nothing changed: ${message} ${cleanup}`, {
      cause: error,
    });
  }
  const durationMs = Math.round(performance.now() - started);
  await hintShardStatistics(db);
  return {
    before,
    after: await tenantPlacement(db, organizationId),
    isolated: true,
    method: options.sameNode ? 'isolate_tenant_to_new_shard' : 'split',
    durationMs,
  };
}

/** The node for the new shard groups: `toNode` if given, else the worker (not `from`'s) with the fewest groups. */
async function targetNode(db: Db, from: TenantPlacement, toNode?: string): Promise<{ node: string; nodeId: number }> {
  const { rows } = await sql<{ node: string; node_id: number; groups: number }>`
    select n.nodename || ':' || n.nodeport as node, n.nodeid as node_id,
           (select count(*)::int from pg_dist_shard s join pg_dist_placement p using (shardid)
            where s.logicalrelid = 'surveys'::regclass and p.groupid = n.groupid) as groups
    from pg_dist_node n
    where n.isactive and n.noderole = 'primary' and n.shouldhaveshards
    order by groups, n.nodeid`.execute(db);
  if (toNode !== undefined) {
    const chosen = rows.find((row) => row.node === toNode);
    if (!chosen) {
      throw new TenantCommandRefused(
        `${toNode} is not an active node that holds shards (${rows.map((row) => row.node).join(', ') || 'none'}).`,
      );
    }
    if (chosen.node_id === from.nodeId) {
      throw new TenantCommandRefused(
        `${toNode} already holds the organization's shard group; use --same-node to isolate it there.`,
      );
    }
    return { node: chosen.node, nodeId: chosen.node_id };
  }
  const other = rows.find((row) => row.node_id !== from.nodeId);
  if (!other) {
    throw new TenantCommandRefused(
      `No other worker than ${from.node} holds shards: isolate on the same node with --same-node, ` +
        'at a quiet moment (see the README, "Scaling out").',
    );
  }
  return { node: other.node, nodeId: other.node_id };
}

/**
 * Runs `operation` on a connection of its own while another one watches the apply workers of this database's
 * Citus subscriptions on every worker; cancels the operation when they keep failing.
 */
async function watched(db: Db, everyMs: number, operation: (connection: Db) => Promise<unknown>): Promise<void> {
  let done = false;
  let stalled: string | undefined;
  await db.connection().execute(async (connection) => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(connection);
    const pid = rows[0]!.pid;
    // Never rejects: a look that fails is tried again at the next tick.
    const watchdog = (async () => {
      while (!done) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        if (done) return;
        try {
          const failing = await applyErrors(db);
          if (failing.length === 0) continue;
          stalled = failing.map((f) => `${f.node}: ${f.errors} apply errors`).join(', ');
          // ::int: Citus adds pg_cancel_backend(bigint), for its global process ids.
          await sql`select pg_cancel_backend(${pid}::int)`.execute(db);
          return;
        } catch {
          // the next tick
        }
      }
    })();
    try {
      await operation(connection);
    } catch (error) {
      if (stalled) {
        throw new Error(
          `the logical replication of the new shards kept failing (${stalled}), so the split was cancelled; ` +
            'the workers\' logs say why (ERROR lines of "logical replication worker").',
          { cause: error },
        );
      }
      throw error;
    } finally {
      done = true;
      await watchdog;
    }
  });
}

/** Workers whose Citus subscriptions (shard moves and splits) of this database have failed three times or more. */
async function applyErrors(db: Db): Promise<{ node: string; errors: number }[]> {
  const { rows } = await sql<{ node: string; success: boolean; result: string }>`
    select nodename || ':' || nodeport as node, success, result from run_command_on_workers($$
      select coalesce(sum(s.apply_error_count), 0)
      from pg_stat_subscription_stats s join pg_subscription p on p.oid = s.subid
      where p.subdbid = (select oid from pg_database where datname = current_database())
        and p.subname like 'citus_shard_%'$$)`.execute(db);
  return rows
    .filter((row) => row.success && Number(row.result) >= 3)
    .map((row) => ({ node: row.node, errors: Number(row.result) }));
}

/** One node's share of the tenant tables. */
export interface NodeShare {
  node: string;
  nodeId: number;
  /** Shard groups (shards of `surveys`) on the node. */
  shardGroups: number;
  /** Bytes of every tenant table's shards on the node. */
  bytes: number;
  organizations: number;
  /** Rows of the tenant tables on the node, in all and by table. */
  rows: number;
  rowsByTable: Record<string, number>;
}

/**
 * How the tenant tables spread over the nodes that hold shards: shard groups, bytes, organizations and rows per
 * node. Counts every row of every shard (one `count(*)` per shard, on its node): an operator's command, not a
 * request's.
 */
export async function tenantSpread(db: DbOrTx): Promise<NodeShare[]> {
  await requireCitus(db);
  const { rows: shards } = await sql<{ table: string; shard_id: number; group_id: number }>`
    select s.logicalrelid::regclass::text as table, s.shardid as shard_id, pl.groupid as group_id
    from pg_dist_shard s
      join pg_dist_partition p using (logicalrelid)
      join pg_dist_placement pl on pl.shardid = s.shardid and pl.shardstate = 1
    where p.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'surveys'::regclass)
    order by 1, 2`.execute(db);
  const { rows: nodes } = await sql<{ node: string; node_id: number; group_id: number }>`
    select nodename || ':' || nodeport as node, nodeid as node_id, groupid as group_id
    from pg_dist_node where isactive and noderole = 'primary'
      and (shouldhaveshards or groupid = any(${[...new Set(shards.map((s) => s.group_id))]}::int[]))
    order by nodeid`.execute(db);
  const { rows: sizes } = await sql<{ shard_id: number; size: number }>`
    select shard_id, max(size) as size from citus_shard_sizes() group by shard_id`.execute(db);
  const { rows: counts } = await sql<{ shard_id: number; success: boolean; result: string }>`
    select r.shardid as shard_id, r.success, r.result
    from unnest(${[...new Set(shards.map((s) => s.table))]}::regclass[]) as t (name)
      cross join lateral run_command_on_shards(t.name, 'select count(*) from %s') r`.execute(db);
  const { rows: organizations } = await sql<{ group_id: number; n: number }>`
    select pl.groupid as group_id, count(*)::int as n
    from organizations o
      join pg_dist_placement pl on pl.shardid = get_shard_id_for_distribution_column('surveys', o.id)
    group by 1`.execute(db);

  const failed = counts.filter((c) => !c.success);
  if (failed.length > 0) {
    throw new Error(`Counting rows failed on shard(s) ${failed.map((c) => `${c.shard_id}: ${c.result}`).join('; ')}`);
  }
  const sizeOf = new Map(sizes.map((s) => [Number(s.shard_id), Number(s.size)]));
  const countOf = new Map(counts.map((c) => [Number(c.shard_id), Number(c.result)]));
  return nodes.map((node) => {
    const here = shards.filter((s) => s.group_id === node.group_id);
    const rowsByTable: Record<string, number> = {};
    for (const shard of here) {
      rowsByTable[shard.table] = (rowsByTable[shard.table] ?? 0) + (countOf.get(Number(shard.shard_id)) ?? 0);
    }
    return {
      node: node.node,
      nodeId: node.node_id,
      shardGroups: here.filter((s) => s.table === 'surveys').length,
      bytes: here.reduce((sum, s) => sum + (sizeOf.get(Number(s.shard_id)) ?? 0), 0),
      organizations: organizations.find((o) => o.group_id === node.group_id)?.n ?? 0,
      rows: Object.values(rowsByTable).reduce((sum, n) => sum + n, 0),
      rowsByTable,
    };
  });
}
