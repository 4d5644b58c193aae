/**
 * The modules' SQL files (server/src/modules/<module>/sql/NN_<name>.sql) and the repeatable step that applies them
 * after the migrations (server/src/db/repeatable.ts, docs/decisions/0065-sql-owned-by-modules.md): every function and
 * trigger of the schema comes from exactly one file and holds its text; a file runs again only when it changed;
 * files run in the order of their numbers across modules; `migrateTo` leaves the step out and the next
 * `migrateToLatest` applies every file; processes that migrate at once do not conflict. Runs on plain PostgreSQL and
 * on Citus (`CITUS=1`), where every node must hold the same text.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type QueryExecutorProvider } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../server/src/db/database.js';
import { migrateTo, migrateToLatestWithOutcome } from '../../server/src/db/migrate.js';
import {
  applyRepeatableSql,
  moduleSqlObjects,
  readRepeatableFiles,
  splitStatements,
  type RepeatableFile,
} from '../../server/src/db/repeatable.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let handle: DatabaseHandle;
let files: RepeatableFile[];
let citus: boolean;

beforeAll(async () => {
  database = await createTestDatabase();
  handle = openDatabase(database.url, 4);
  files = await readRepeatableFiles();
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(handle.db);
  citus = rows[0]!.citus;
});
afterAll(async () => {
  await handle?.close();
  // Migrated down and up: not worth the reuse check on Citus.
  await database?.drop();
});

const objects = () => moduleSqlObjects(files);
const functionNames = () =>
  [
    ...new Set(
      objects()
        .filter((o) => o.kind === 'function')
        .map((o) => o.name),
    ),
  ].sort();

async function functionsInDatabase(db: QueryExecutorProvider) {
  const { rows } = await sql<{ name: string; source: string; definition: string; version: string }>`
    select proname as name, prosrc as source, pg_get_functiondef(oid) as definition, xmin::text as version
    from pg_proc where pronamespace = 'public'::regnamespace order by proname collate "C"`.execute(db);
  return rows;
}

async function triggersInDatabase(db: QueryExecutorProvider) {
  const { rows } = await sql<{ name: string; table: string; definition: string }>`
    select t.tgname as name, c.relname as table, pg_get_triggerdef(t.oid) as definition
    from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where c.relnamespace = 'public'::regnamespace and not t.tgisinternal
    order by c.relname collate "C", t.tgname collate "C"`.execute(db);
  return rows;
}

/** Every function's and trigger's text, as the database keeps it: each body byte for byte the file's. */
async function expectTheFilesText(db: QueryExecutorProvider) {
  const inDatabase = await functionsInDatabase(db);
  expect(inDatabase.map((f) => f.name)).toEqual(functionNames());
  for (const object of objects().filter((o) => o.kind === 'function')) {
    expect(inDatabase.find((f) => f.name === object.name)?.source, `${object.name} (${object.file})`).toBe(object.body);
  }
}

describe('a migrated database', () => {
  it('holds every function and trigger of the module files, and nothing else', async () => {
    const names = objects().map((o) => `${o.kind} ${o.name}${o.table ? ` on ${o.table}` : ''}`);
    expect(new Set(names).size, 'each object is created by one file').toBe(names.length);
    await expectTheFilesText(handle.db);
    const triggers = await triggersInDatabase(handle.db);
    expect(triggers.map((t) => `${t.name} on ${t.table}`).sort()).toEqual(
      objects()
        .filter((o) => o.kind === 'trigger')
        .map((o) => `${o.name} on ${o.table}`)
        .sort(),
    );
    const { rows } = await sql<{ name: string; checksum: string }>`
      select name, checksum from repeatable_sql order by name collate "C"`.execute(handle.db);
    expect(rows).toEqual(
      files.map((f) => ({ name: f.name, checksum: f.checksum })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    );
  });

  it('changes no definition when every file runs again (pg_get_functiondef, pg_get_triggerdef)', async () => {
    const functions = await functionsInDatabase(handle.db);
    const triggers = await triggersInDatabase(handle.db);
    let again: { functions: typeof functions; triggers: typeof triggers } | undefined;
    const rollback = new Error('rollback');
    await handle.db
      .transaction()
      .execute(async (tx) => {
        await sql`update repeatable_sql set checksum = 'stale'`.execute(tx);
        expect(await applyRepeatableSql(tx)).toEqual(files.map((f) => f.name));
        again = { functions: await functionsInDatabase(tx), triggers: await triggersInDatabase(tx) };
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    expect(again!.functions.map((f) => f.definition)).toEqual(functions.map((f) => f.definition));
    expect(again!.triggers).toEqual(triggers);
  });

  it.runIf(process.env.CITUS === '1')('holds the same text on every Citus node', async () => {
    expect(citus).toBe(true);
    const text = `select string_agg(proname || ':' || md5(prosrc), ',' order by proname)
      from pg_proc where pronamespace = 'public'::regnamespace`;
    const { rows: coordinator } = await sql<{ text: string }>`select (${sql.raw(text)}) as text`.execute(handle.db);
    const { rows: workers } = await sql<{ success: boolean; result: string }>`
      select success, result from run_command_on_workers(${text})`.execute(handle.db);
    expect(workers.length).toBeGreaterThan(0);
    for (const worker of workers) expect(worker).toEqual({ success: true, result: coordinator[0]!.text });
    // The submission's functions stay distributed by the organization, with `surveys`.
    const { rows: distributed } = await sql<{ name: string; argument: number; with_surveys: boolean }>`
      select p.proname as name, o.distribution_argument_index as argument,
             o.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'surveys'::regclass)
               as with_surveys
      from pg_dist_object o join pg_proc p on p.oid = o.objid
      where o.classid = 'pg_proc'::regclass and o.distribution_argument_index is not null
      order by 1`.execute(handle.db);
    expect(distributed).toEqual([
      { name: 'record_event', argument: 0, with_surveys: true },
      { name: 'store_response', argument: 0, with_surveys: true },
    ]);
  });
});

describe('the repeatable step', () => {
  it('runs no unchanged file again, and only the file whose checksum changed', async () => {
    const before = await functionsInDatabase(handle.db);
    const { rows: applied } = await sql<{ name: string; at: string }>`
      select name, applied_at::text as at from repeatable_sql order by name collate "C"`.execute(handle.db);
    expect(await migrateToLatestWithOutcome(handle.db)).toEqual({ migrations: [], repeatable: [] });
    expect(await functionsInDatabase(handle.db)).toEqual(before);
    expect(
      (
        await sql<{ name: string; at: string }>`
        select name, applied_at::text as at from repeatable_sql order by name collate "C"`.execute(handle.db)
      ).rows,
    ).toEqual(applied);

    const encode = files.find((f) => f.name === 'analytics/10_analytics_encode.sql')!;
    await sql`update repeatable_sql set checksum = 'stale' where name = ${encode.name}`.execute(handle.db);
    expect(await migrateToLatestWithOutcome(handle.db)).toEqual({ migrations: [], repeatable: [encode.name] });
    const after = await functionsInDatabase(handle.db);
    for (const fn of after) {
      const previous = before.find((f) => f.name === fn.name)!;
      if (fn.name === 'analytics_encode') expect(fn.version).not.toBe(previous.version);
      else expect(fn.version, fn.name).toBe(previous.version);
      expect(fn.definition).toBe(previous.definition);
    }
    const { rows } = await sql<{ checksum: string }>`
      select checksum from repeatable_sql where name = ${encode.name}`.execute(handle.db);
    expect(rows[0]?.checksum).toBe(encode.checksum);
  });

  it('runs new and changed files in the order of their numbers across modules, and names a failing one', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'repeatable-sql-'));
    const write = (name: string, text: string) => {
      mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
      writeFileSync(path.join(folder, name), text);
    };
    try {
      // `language sql` bodies are checked when created: 20 needs 10, in another module that sorts after it.
      write(
        'b/sql/10_probe_base.sql',
        `-- The base.\ncreate or replace function repeatable_probe_base() returns int\nlanguage sql as $$ select 1 $$;\n`,
      );
      write(
        'a/sql/20_probe.sql',
        `create or replace function repeatable_probe() returns int language sql as $$ select repeatable_probe_base() + 10 $$;\n` +
          `-- Two statements; a semicolon in a comment; does not split.\n` +
          `create or replace function repeatable_probe_text() returns text language sql as $$ select 'a;b' $$;\n`,
      );
      write('a/README.md', 'not a module SQL file\n');
      const rollback = new Error('rollback');
      await handle.db
        .transaction()
        .execute(async (tx) => {
          expect(await applyRepeatableSql(tx, folder)).toEqual(['b/10_probe_base.sql', 'a/20_probe.sql']);
          const probe = () =>
            sql<{ n: number; t: string }>`select repeatable_probe() as n, repeatable_probe_text() as t`.execute(tx);
          expect((await probe()).rows).toEqual([{ n: 11, t: 'a;b' }]);
          expect(await applyRepeatableSql(tx, folder)).toEqual([]);
          write(
            'b/sql/10_probe_base.sql',
            `create or replace function repeatable_probe_base() returns int\nlanguage sql as $$ select 2 $$;\n`,
          );
          expect(await applyRepeatableSql(tx, folder)).toEqual(['b/10_probe_base.sql']);
          expect((await probe()).rows).toEqual([{ n: 12, t: 'a;b' }]);
          // The rows of the real modules' files, absent from this folder, went.
          const { rows } = await sql<{
            name: string;
          }>`select name from repeatable_sql order by name collate "C"`.execute(tx);
          expect(rows.map((row) => row.name)).toEqual(['a/20_probe.sql', 'b/10_probe_base.sql']);
          throw rollback;
        })
        .catch((error: unknown) => {
          if (error !== rollback) throw error;
        });

      write('a/sql/30_broken.sql', 'select repeatable_no_such_function();\n');
      await expect(handle.db.transaction().execute((tx) => applyRepeatableSql(tx, folder))).rejects.toThrow(
        /^a\/30_broken\.sql: function repeatable_no_such_function\(\) does not exist/,
      );
      rmSync(path.join(folder, 'a/sql/30_broken.sql'));
      write('a/sql/probe.sql', 'select 1;\n');
      await expect(readRepeatableFiles(folder)).rejects.toThrow(
        /probe\.sql: a module's SQL file is named NN_name\.sql/,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    // Nothing of the above was kept.
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_proc where proname like 'repeatable_probe%'`.execute(handle.db);
    expect(rows[0]!.n).toBe(0);
    await expectTheFilesText(handle.db);
  });

  it('splits statements outside strings, quoted names, dollar quotes and comments', () => {
    expect(
      splitStatements(
        String.raw`-- a comment; not a statement
select 'a;b', "x;y", $$ ; $$, $t$ $$; $t$, E'\';', 'it''s;' ; /* ; /* nested ; */ ; */ select $1, a$b; -- ;
  -- only comments;
`,
      ),
    ).toEqual([String.raw`select 'a;b', "x;y", $$ ; $$, $t$ $$; $t$, E'\';', 'it''s;'`, 'select $1, a$b']);
  });

  it(
    'is left out by migrateTo, whose migrations may leave older texts, and migrateToLatest applies every file then',
    { timeout: 240_000 },
    async () => {
      // The latest migration again: no migration runs, and the checksums are forgotten.
      const latest = (
        await sql<{ name: string }>`
        select name from kysely_migration order by name desc limit 1`.execute(handle.db)
      ).rows[0]!.name;
      expect(await migrateTo(handle.db, latest)).toEqual([]);
      expect((await sql<{ n: number }>`select count(*)::int as n from repeatable_sql`.execute(handle.db)).rows).toEqual(
        [{ n: 0 }],
      );
      expect((await migrateToLatestWithOutcome(handle.db)).repeatable).toEqual(files.map((f) => f.name));

      // Down to before the last change of analytics_encode: its older text is back, and the step's table is gone.
      const before = '2026-11-28T0630_encode_matrix_ranking_dates_and_marks';
      await migrateTo(handle.db, before);
      const encode = objects().find((o) => o.name === 'analytics_encode')!;
      const old = (await functionsInDatabase(handle.db)).find((f) => f.name === 'analytics_encode')!;
      expect(old.source.replace(/\s+/g, ' ')).not.toBe(encode.body!.replace(/\s+/g, ' '));
      expect(
        (await sql<{ t: string | null }>`select to_regclass('repeatable_sql')::text as t`.execute(handle.db)).rows,
      ).toEqual([{ t: null }]);

      const outcome = await migrateToLatestWithOutcome(handle.db);
      expect(outcome.migrations[0]).toBe('2026-11-28T0700_encode_by_index');
      expect(outcome.migrations.at(-1)).toBe(latest);
      expect(outcome.repeatable).toEqual(files.map((f) => f.name));
      await expectTheFilesText(handle.db);
    },
  );

  it('lets processes that start together migrate once between them', { timeout: 120_000 }, async () => {
    // Before the step's own migration: both find it pending, and every file new.
    await migrateTo(handle.db, '2026-11-29T1000_retention');
    const others = [openDatabase(database.url, 2), openDatabase(database.url, 2), openDatabase(database.url, 2)];
    try {
      const outcomes = await Promise.all(others.map((other) => migrateToLatestWithOutcome(other.db)));
      const ran = outcomes.filter((o) => o.migrations.length > 0);
      expect(ran).toHaveLength(1);
      expect(ran[0]!.migrations[0]).toBe('2026-11-29T1100_repeatable_sql');
      expect(ran[0]!.migrations).toContain('2026-11-29T1200_deletions_name_respondent');
      expect(ran[0]!.repeatable).toEqual(files.map((f) => f.name));
      expect(outcomes.filter((o) => o.migrations.length === 0)).toEqual([
        { migrations: [], repeatable: [] },
        { migrations: [], repeatable: [] },
      ]);
      // Every file stale at once: one of them runs the files, the others find them recorded.
      await sql`update repeatable_sql set checksum = 'stale'`.execute(handle.db);
      const again = await Promise.all(others.map((other) => migrateToLatestWithOutcome(other.db)));
      expect(again.map((o) => o.repeatable.length).sort()).toEqual([0, 0, files.length]);
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
    await expectTheFilesText(handle.db);
  });
});
