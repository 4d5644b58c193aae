/**
 * Reuse of test databases within one `CITUS=1` run. A database on the cluster costs a test file ~7 s on a quiet
 * machine and ~18 s under load to make (`cluster.sh createdb`, every migration distributing the tenant tables,
 * pg-boss's schema) and another 2–6 s to drop; emptying one takes well under a second. So a file that is done
 * with its database (TestDatabase.release) resets it to the freshly-migrated state and leaves it here for the
 * next file of the same run; the run's global teardown drops what is left (their names carry the run's process id,
 * see global-setup.ts). Plain PostgreSQL does not need this: a clone of the template is cheap.
 *
 * The pool is a folder per run (global-setup.ts makes it) holding one JSON file per free database. Test files run
 * in several worker processes: a file leases a database by renaming its entry, which only one process can do
 * (`renameSync` is atomic on one file system), and returns it by writing a new entry under a temporary name and
 * renaming that into place.
 *
 * Reset (resetAndCheck): end every other session of the database, drop pg-boss's queues (a partition each, made
 * by the service at start), have each node TRUNCATE its own tables that were written (the shards on the workers,
 * pg-boss's tables and the reference tables' copies on the coordinator) except the migrations' tables and pg-boss's
 * version row, restart the sequences, forget the planner's statistics and the cumulative counters
 * (citus_stat_counters included) on every node. Then every table must be empty again and the database must
 * match the fingerprint taken when it was made, on every node: schemas, tables, columns and their options,
 * indexes, constraints, triggers and whether they are enabled, functions, types, the database's settings,
 * extensions, replication objects; on the coordinator also the migrations that ran, pg-boss's version row and
 * Citus's metadata (distributed tables, colocation, every shard and where it is placed). Any difference, and any
 * error, and the database is dropped rather than reused. That catches a test that migrated down and up
 * (new tables and shards), isolated a tenant (new shards), left a trigger disabled or a column option changed
 * on the shards, or set something on the database. A test file that wants none of this can call `drop()`
 * itself: its release is then nothing.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

/** Section name → md5 of its lines, per node (`node<port>`). */
export type Fingerprint = Record<string, Record<string, string>>;

export interface PooledDatabase {
  name: string;
  url: string;
  fingerprint: Fingerprint;
}

/** Takes a free database of this run's pool, or undefined when there is none (the caller makes one). */
export function leaseDatabase(pool: string): PooledDatabase | undefined {
  let entries: string[];
  try {
    entries = readdirSync(pool).filter((entry) => entry.endsWith('.json'));
  } catch {
    return undefined; // no pool (any more)
  }
  for (const entry of entries) {
    const leased = path.join(pool, `${entry}.leased-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      renameSync(path.join(pool, entry), leased);
    } catch {
      continue; // another process leased it first
    }
    const database = JSON.parse(readFileSync(leased, 'utf8')) as PooledDatabase;
    unlinkSync(leased);
    return database;
  }
  return undefined;
}

/**
 * Resets the database and, when it matches its fingerprint, puts it in the pool; returns whether it did. On false
 * the caller drops it. Never throws.
 */
export async function returnDatabase(pool: string, database: PooledDatabase): Promise<boolean> {
  try {
    const problem = await resetAndCheck(database);
    if (problem) {
      console.warn(`Citus database pool: ${database.name} not reused (${problem})`);
      return false;
    }
    const temporary = path.join(pool, `.${database.name}.tmp`);
    writeFileSync(temporary, JSON.stringify(database));
    renameSync(temporary, path.join(pool, `${database.name}.json`));
    return true;
  } catch (error) {
    console.warn(`Citus database pool: ${database.name} not reused (${(error as Error).message})`);
    return false;
  }
}

/** Connections to the database on every node, the coordinator first, each seeing the shards on it. */
async function connectToNodes(url: string): Promise<Array<{ node: string; client: pg.Client }>> {
  const coordinator = new pg.Client({ connectionString: url, application_name: 'survey-test-pool' });
  await coordinator.connect();
  const nodes = [{ node: `node${new URL(url).port}`, client: coordinator }];
  try {
    const { rows } = await coordinator.query<{ nodeport: number }>(
      `select nodeport from pg_dist_node where groupid <> 0 order by nodeport`,
    );
    for (const { nodeport } of rows) {
      const workerUrl = new URL(url);
      workerUrl.port = String(nodeport);
      const client = new pg.Client({ connectionString: workerUrl.toString(), application_name: 'survey-test-pool' });
      await client.connect();
      nodes.push({ node: `node${nodeport}`, client });
    }
    // Citus hides shards from catalog queries of ordinary sessions; the fingerprint and the reset want them.
    await Promise.all(nodes.map(({ client }) => client.query(`set citus.show_shards_for_app_name_prefixes = '*'`)));
  } catch (error) {
    await Promise.all(nodes.map(({ client }) => client.end().catch(() => {})));
    throw error;
  }
  return nodes;
}

/** The fingerprint of a database just made (createCitusDatabase): what every reset must get back to. */
export async function fingerprintDatabase(url: string): Promise<Fingerprint> {
  const nodes = await connectToNodes(url);
  try {
    return await fingerprintNodes(nodes);
  } finally {
    await Promise.all(nodes.map(({ client }) => client.end().catch(() => {})));
  }
}

async function fingerprintNodes(nodes: Array<{ node: string; client: pg.Client }>): Promise<Fingerprint> {
  const fingerprint: Fingerprint = {};
  await Promise.all(
    nodes.map(async ({ node, client }, i) => {
      const sections = i === 0 ? [...catalogSections, ...coordinatorSections] : catalogSections;
      const { rows } = await client.query<{ section: string; md5: string }>(
        sections
          .map(([section, lines]) => `select '${section}' as section, md5(coalesce((${lines}), '')) as md5`)
          .join(' union all '),
      );
      fingerprint[node] = Object.fromEntries(rows.map((row) => [row.section, row.md5]));
    }),
  );
  return fingerprint;
}

/** The user's schemas (not the system's, not an extension's) and their relations, for the sections below. */
const userSchemas = `select n.oid from pg_namespace n where n.nspname !~ '^pg_' and n.nspname <> 'information_schema'
  and not exists (select 1 from pg_depend d where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e')`;
const userRelations = `select c.oid from pg_class c where c.relnamespace in (${userSchemas})
  and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')`;
const lines = (expression: string, from: string) =>
  `select string_agg(line, E'\\n' order by line) from (select ${expression} as line from ${from}) as lines`;

/** [section, a query giving its text] for every node; no OIDs, which differ between nodes and after a rebuild. */
const catalogSections: Array<[string, string]> = [
  ['schemas', lines(`nspname`, `pg_namespace where oid in (${userSchemas})`)],
  [
    'relations',
    lines(
      `format('%s %s %s %s %s %s', c.oid::regclass, c.relkind, c.relpersistence, c.reloptions, c.relrowsecurity, c.relispartition)`,
      `pg_class c where c.oid in (${userRelations})`,
    ),
  ],
  [
    'columns',
    lines(
      `format('%s %s %s %s %s %s %s %s %s', a.attrelid::regclass, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
        a.attnotnull, a.attidentity, a.attgenerated, a.attoptions, pg_get_expr(ad.adbin, ad.adrelid))`,
      `pg_attribute a left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
        where a.attrelid in (${userRelations}) and a.attnum > 0 and not a.attisdropped`,
    ),
  ],
  ['indexes', lines(`pg_get_indexdef(indexrelid)`, `pg_index where indrelid in (${userRelations})`)],
  [
    'constraints',
    lines(
      `format('%s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))`,
      `pg_constraint where connamespace in (${userSchemas})`,
    ),
  ],
  [
    'triggers',
    lines(
      `format('%s %s', tgenabled, pg_get_triggerdef(oid))`,
      `pg_trigger where tgrelid in (${userRelations}) and not tgisinternal`,
    ),
  ],
  [
    'functions',
    lines(
      `format('%s.%s(%s) %s %s %s', pronamespace::regnamespace, proname, pg_get_function_identity_arguments(oid),
        md5(prosrc), provolatile, proconfig)`,
      `pg_proc where pronamespace in (${userSchemas})`,
    ),
  ],
  [
    'types',
    lines(
      `format('%s %s %s', t.oid::regtype, t.typtype,
        (select string_agg(enumlabel, ',' order by enumsortorder) from pg_enum e where e.enumtypid = t.oid))`,
      `pg_type t where t.typnamespace in (${userSchemas}) and t.typtype in ('e', 'd', 'c') and t.typrelid = 0`,
    ),
  ],
  ['policies', lines(`format('%s %s', polrelid::regclass, polname)`, `pg_policy where polrelid in (${userRelations})`)],
  [
    'settings',
    lines(
      `format('%s %s', setrole, setconfig)`,
      `pg_db_role_setting where setdatabase = (select oid from pg_database where datname = current_database())`,
    ),
  ],
  ['extensions', lines(`format('%s %s', extname, extversion)`, `pg_extension`)],
  [
    'replication',
    `select concat_ws(E'\\n',
      (select string_agg(pubname, ',' order by pubname) from pg_publication),
      (select string_agg(subname, ',' order by subname) from pg_subscription
        where subdbid = (select oid from pg_database where datname = current_database())),
      (select string_agg(slot_name::text, ',' order by slot_name) from pg_replication_slots where database = current_database()))`,
  ],
];

/** Only the coordinator holds these. */
const coordinatorSections: Array<[string, string]> = [
  ['migrations', lines(`name`, `kysely_migration`)],
  ['migration lock', lines(`format('%s %s', id, is_locked)`, `kysely_migration_lock`)],
  ['pg-boss version', lines(`row_to_json(v)::text`, `pgboss.version v`)],
  [
    'distributed tables',
    lines(
      `format('%s %s %s %s %s', logicalrelid, partmethod, column_to_column_name(logicalrelid, partkey), colocationid, repmodel)`,
      `pg_dist_partition`,
    ),
  ],
  [
    'colocation',
    lines(
      `format('%s %s %s %s', colocationid, shardcount, replicationfactor, distributioncolumntype)`,
      `pg_dist_colocation`,
    ),
  ],
  [
    'shards',
    lines(
      `format('%s %s %s %s %s', s.logicalrelid, s.shardid, s.shardminvalue, s.shardmaxvalue,
        (select string_agg(p.groupid::text, ',' order by p.groupid) from pg_dist_placement p where p.shardid = s.shardid))`,
      `pg_dist_shard s`,
    ),
  ],
  ['nodes', lines(`format('%s %s %s %s', nodeport, groupid, isactive, shouldhaveshards)`, `pg_dist_node`)],
  ['cleanup', lines(`format('%s %s', object_type, object_name)`, `pg_dist_cleanup`)],
];

/** The tables of a node to empty: written since they were made (see resetAndCheck). */
const writtenTables = `select c.oid::regclass::text as name from pg_class c
  where c.oid in (${userRelations}) and c.relkind = 'r' and pg_relation_size(c.oid) > 0
    and c.oid not in (select logicalrelid from pg_dist_partition)
    and c.oid::regclass::text not in ('kysely_migration', 'kysely_migration_lock', 'repeatable_sql', 'pgboss.version')`;

/**
 * Brings the database back to its freshly-migrated state; returns why it cannot be reused, or undefined when it
 * matches its fingerprint on every node.
 */
async function resetAndCheck(database: PooledDatabase): Promise<string | undefined> {
  const nodes = await connectToNodes(database.url);
  const [{ client: coordinator }] = nodes as [{ node: string; client: pg.Client }];
  try {
    // The service under test has closed; a session left over (a process that was not waited for) must not write
    // into the next file's data. Coordinator first: its sessions' connections to the workers end with them.
    for (const { client } of nodes) {
      await client.query(
        `select pg_terminate_backend(pid, 5000) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
    }
    // A wait never hangs the run: the database is dropped instead.
    await Promise.all(nodes.map(({ client }) => client.query(`set lock_timeout = '10s'`)));
    // A two-phase commit cut short by the terminations holds its locks until recovered.
    await coordinator.query(`select recover_prepared_transactions()`);
    // A queue's jobs first: its row cannot be deleted while they refer to it (ON DELETE RESTRICT).
    await coordinator.query(`truncate pgboss.job, pgboss.archive`);
    await coordinator.query(`select pgboss.delete_queue(name) from pgboss.queue`);
    // Each node truncates its own tables that were written since they were made (a file no longer empty): on the
    // workers the shards, on the coordinator pg-boss's tables and its copies of the reference tables; never the
    // tables that Citus distributes (empty on every node, their rows are in the shards) nor the migrations'. Citus's
    // TRUNCATE of the distributed tables took 6–8 s under load (a distributed lock and a remote task per shard).
    await Promise.all(
      nodes.map(async ({ client }) => {
        const { rows: tables } = await client.query<{ name: string }>(writtenTables);
        if (tables.length > 0) {
          await client.query(`set citus.enable_manual_changes_to_shards = on`);
          await client.query(`truncate ${tables.map((t) => t.name).join(', ')} cascade`);
        }
      }),
    );
    // Restarts the identities that TRUNCATE … RESTART IDENTITY would, and any other sequence.
    await coordinator.query(
      `select setval(s.seqrelid, s.seqstart, false) from pg_sequence s where s.seqrelid in (${userRelations})`,
    );
    await coordinator.query(`update pgboss.version set maintained_on = null, cron_on = null, monitored_on = null`);
    // A file's plans must not depend on what the files before it analysed; its counters start at zero.
    for (const { client } of nodes) {
      await client.query(`delete from pg_statistic where starelid in (${userRelations})`);
      await client.query(`delete from pg_statistic_ext_data where stxoid in
        (select oid from pg_statistic_ext where stxrelid in (${userRelations}))`);
      await client.query(`select pg_stat_reset(), citus_stat_counters_reset()`);
    }
    const { rows: others } = await coordinator.query<{ name: string }>(
      `select coalesce(nullif(application_name, ''), client_addr::text, 'local') as name from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
         and application_name <> 'survey-test-pool' and application_name not like 'citus\\_internal%'`,
    );
    if (others.length > 0) return `sessions came back during the reset: ${others.map((o) => o.name).join(', ')}`;
    const now = await fingerprintNodes(nodes);
    const differences: string[] = [];
    for (const { node, client } of nodes) {
      const { rows } = await client.query<{ name: string }>(writtenTables);
      if (rows.length > 0) differences.push(`rows left in ${rows.map((row) => row.name).join(', ')} on ${node}`);
    }
    for (const [node, sections] of Object.entries(database.fingerprint)) {
      for (const [section, md5] of Object.entries(sections)) {
        if (now[node]?.[section] !== md5) differences.push(`${section} on ${node}`);
      }
    }
    if (Object.keys(now).sort().join() !== Object.keys(database.fingerprint).sort().join()) differences.push('nodes');
    return differences.length > 0 ? `differs from when it was made: ${differences.join(', ')}` : undefined;
  } finally {
    await Promise.all(nodes.map(({ client }) => client.end().catch(() => {})));
  }
}
