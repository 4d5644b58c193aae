/**
 * The repeatable step of the migrations: every module's PL/pgSQL functions and triggers, kept as readable SQL files
 * in the module (`server/src/modules/<module>/sql/NN_<name>.sql`), applied after the migrations in their
 * transaction, as Flyway applies its repeatable migrations (docs/decisions/0065-sql-owned-by-modules.md).
 *
 * - **Which files run**: those whose SHA-256 differs from the one recorded in `repeatable_sql` when they last ran,
 *   and those never run. An unchanged file is not executed again. The rows of files that no longer exist are
 *   deleted (their objects stay: dropping one takes a migration).
 * - **Order**: by the two-digit number that starts each file's name, then by `<module>/<file>`, across all modules.
 *   A file may use in its statements only objects of files with a smaller number: a trigger its function (same
 *   file), a `language sql` body the functions it calls (checked when it is created), and by convention PL/pgSQL
 *   bodies their callees too, so that the numbers show the call graph.
 * - **Statements**: each file runs statement by statement (one query each, like the migrations on Citus, which
 *   propagates a DDL statement to the workers with the text it came in). A failure names the file and rolls back
 *   the whole transaction, migrations included: a database never runs a new schema with old functions.
 * - **Locking**: the caller (migrate.ts) runs this in the migrations' transaction, which holds the Migrator's advisory
 *   lock until it commits; this takes it again (as a transaction lock; a session may hold it twice), so it is
 *   serialised on its own too. Processes that start together run it one after the other, and the later ones find
 *   every checksum recorded.
 * - **Citus**: when the database has the extension and a file is to run, `citus.multi_shard_modify_mode` is
 *   sequential (function commands need it) and `citus.enable_unsafe_triggers` is on (a trigger of a distributed table
 *   is created only so, on the table and each shard), as the migrations that made these objects did. Citus carries a
 *   replaced function to the nodes that have it; a file whose function must be distributed says so itself
 *   (`create_distributed_function`, guarded by the extension's presence).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type QueryExecutorProvider } from 'kysely';

/** The modules' folder: each module's files are in its `sql/` folder. */
export const modulesFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'modules');

/**
 * The advisory lock of Kysely's Migrator on PostgreSQL (its PostgresAdapter): the migrations and this step share it.
 */
export const migrationLockId = '3853314791062309107';

/** One file of a module's `sql/` folder. */
export interface RepeatableFile {
  /** `<module>/<file>`, the key of its row in `repeatable_sql`. */
  name: string;
  path: string;
  /** Its place in the order: the number its name starts with. */
  order: number;
  text: string;
  /** SHA-256 of its bytes, hex. */
  checksum: string;
}

const fileName = /^(\d{2})_[a-z0-9_]+\.sql$/;

/** Every module's files, in the order they run. Throws on a `.sql` file whose name has no place in the order. */
export async function readRepeatableFiles(folder = modulesFolder): Promise<RepeatableFile[]> {
  const files: RepeatableFile[] = [];
  for (const module of (await readdir(folder, { withFileTypes: true })).filter((entry) => entry.isDirectory())) {
    const sqlFolder = path.join(folder, module.name, 'sql');
    if (!existsSync(sqlFolder)) continue;
    for (const file of await readdir(sqlFolder)) {
      if (!file.endsWith('.sql')) continue;
      const match = fileName.exec(file);
      if (!match) {
        throw new Error(
          `${path.join(sqlFolder, file)}: a module's SQL file is named NN_name.sql (NN: its place in the order, two digits)`,
        );
      }
      const bytes = await readFile(path.join(sqlFolder, file));
      files.push({
        name: `${module.name}/${file}`,
        path: path.join(sqlFolder, file),
        order: Number(match[1]),
        text: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      });
    }
  }
  return files.sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Runs the files that changed or are new (see the top of this file) on `db`, which must be inside a transaction
 * (the migrations'); records their checksums. Returns the names of the files it ran, in order.
 */
export async function applyRepeatableSql(db: QueryExecutorProvider, folder = modulesFolder): Promise<string[]> {
  await sql`select pg_advisory_xact_lock(${sql.lit(migrationLockId)})`.execute(db);
  const files = await readRepeatableFiles(folder);
  const { rows } = await sql<{ name: string; checksum: string }>`select name, checksum from repeatable_sql`.execute(db);
  const recorded = new Map(rows.map((row) => [row.name, row.checksum]));
  const due = files.filter((file) => recorded.get(file.name) !== file.checksum);
  if (due.length > 0 && (await hasCitus(db))) {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
    await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
  }
  for (const file of due) {
    for (const statement of splitStatements(file.text)) {
      try {
        await sql.raw(statement).execute(db);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(`${file.name}: ${message}`, { cause: error });
      }
    }
    await sql`
      insert into repeatable_sql (name, checksum) values (${file.name}, ${file.checksum})
      on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`.execute(db);
  }
  const gone = [...recorded.keys()].filter((name) => !files.some((file) => file.name === name));
  if (gone.length > 0) await sql`delete from repeatable_sql where name = any(${gone}::text[])`.execute(db);
  return due.map((file) => file.name);
}

/**
 * Forgets every recorded checksum, so that the next `applyRepeatableSql` runs every file: after migrations ran down
 * or up outside it (`migrateTo`), an old migration may have left its own text of a function. Nothing when the table
 * does not exist (yet, or any more).
 */
export async function forgetRepeatableSql(db: QueryExecutorProvider): Promise<void> {
  const { rows } = await sql<{ exists: boolean }>`select to_regclass('repeatable_sql') is not null as exists`.execute(
    db,
  );
  if (rows[0]?.exists) await sql`delete from repeatable_sql`.execute(db);
}

/** A function or trigger that a module SQL file creates. */
export interface ModuleSqlObject {
  /** The file's `<module>/<file>`. */
  file: string;
  kind: 'function' | 'trigger';
  name: string;
  /** A trigger's table. */
  table?: string;
  /** A function's body, between its dollar quotes: what PostgreSQL keeps as `pg_proc.prosrc`. */
  body?: string;
}

/** The functions and triggers each file creates (`create [or replace] function|trigger`), in file order. */
export function moduleSqlObjects(files: readonly RepeatableFile[]): ModuleSqlObject[] {
  const objects: ModuleSqlObject[] = [];
  for (const file of files) {
    for (const statement of splitStatements(file.text)) {
      const fn = /^create\s+(?:or\s+replace\s+)?function\s+(?:public\.)?(\w+)\s*\(/i.exec(statement);
      if (fn) {
        const body = /\bas\s+(\$\w*\$)([\s\S]*?)\1/i.exec(statement)?.[2];
        objects.push({ file: file.name, kind: 'function', name: fn[1]!, ...(body === undefined ? {} : { body }) });
      }
      const trigger = /^create\s+(?:or\s+replace\s+)?trigger\s+(\w+)\s[\s\S]*?\bon\s+(?:public\.)?(\w+)/i.exec(
        statement,
      );
      if (trigger) objects.push({ file: file.name, kind: 'trigger', name: trigger[1]!, table: trigger[2]! });
    }
  }
  return objects;
}

async function hasCitus(db: QueryExecutorProvider): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

/**
 * The statements of a SQL file, without the comments before them and their final semicolons: split at each `;`
 * outside a string, a quoted identifier, a dollar-quoted body and a comment. Pieces holding nothing but comments and
 * white space are left out.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  /** Where the statement's first token starts; -1 before it. */
  let start = -1;
  let i = 0;
  const code = () => {
    if (start < 0) start = i;
  };
  const end = (at: number) => {
    if (start >= 0) statements.push(text.slice(start, at).trim());
    start = -1;
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol + 1;
    } else if (c === '/' && next === '*') {
      // Block comments nest in PostgreSQL.
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text.startsWith('/*', i)) depth++;
        else if (text.startsWith('*/', i)) depth--;
        else {
          i++;
          continue;
        }
        i += 2;
      }
    } else if (c === "'" || c === '"') {
      // A doubled quote stays inside; an E'' string also escapes with a backslash.
      const escapes = c === "'" && /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '');
      code();
      i++;
      while (i < text.length) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === c && text[i + 1] === c) i += 2;
        else if (text[i] === c) break;
        else i++;
      }
      i++;
    } else if (c === '$' && !/[\w$]/.test(text[i - 1] ?? '')) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/.exec(text.slice(i))?.[0];
      code();
      if (tag) {
        const close = text.indexOf(tag, i + tag.length);
        i = close < 0 ? text.length : close + tag.length;
      } else {
        i++;
      }
    } else if (c === ';') {
      end(i);
      i++;
    } else {
      if (!/\s/.test(c)) code();
      i++;
    }
  }
  end(text.length);
  return statements;
}
