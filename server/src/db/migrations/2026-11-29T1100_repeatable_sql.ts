/**
 * `repeatable_sql`: the checksum of each module SQL file (`server/src/modules/<module>/sql/NN_<name>.sql`) as it was
 * when the repeatable step last ran it (server/src/db/repeatable.ts, docs/decisions/0065-sql-owned-by-modules.md).
 * From now on the functions and triggers live in those files, applied after the migrations whenever they change;
 * migrations change the schema only. Frozen: later changes go into new files.
 *
 * Empty when made, so the step that follows this migration runs every file once, on a database made now and on one
 * migrated from before alike: both end with the files' text of every function, whichever migration wrote it last.
 *
 * On Citus the table stays local to the coordinator, beside the migrator's own tables: only migrations read it.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table repeatable_sql (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table repeatable_sql`.execute(db);
}
