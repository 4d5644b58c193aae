/**
 * `responses.xact_id` and `response_deletions.xact_id` are stamped by a row trigger instead of a column default.
 * Frozen: later changes go into new files.
 *
 * An export's snapshot and the stamps of the rows it selects must count in the same transaction ids
 * (exports/repository.ts, scopeCondition). On Citus a column default of an INSERT sent by the coordinator is
 * evaluated there, with the coordinator's transaction id, while the deletion log's rows are written by a trigger on
 * the shard's node, and each node has its own ids. A BEFORE INSERT row trigger runs where the row is stored, so
 * every stamp is the id of the transaction on the tenant's node, and so is the snapshot an export takes through
 * the tenant's survey row. On one PostgreSQL the trigger stamps exactly what the default did.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  // Citus creates a trigger on a distributed table (and on each of its shards) only when told it is safe: this one
  // reads nothing and writes only the row it fires for.
  if (rows[0]?.citus) await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
  // One statement per query: Citus propagates each DDL statement to the workers with the text it came in.
  await sql`
    create function stamp_writing_transaction() returns trigger
    language plpgsql
    as $$
    -- Triggers responses_stamp_xact and response_deletions_stamp_xact: before insert, for each row.
    begin
      new.xact_id := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  await sql`alter table responses alter column xact_id drop default`.execute(db);
  await sql`alter table response_deletions alter column xact_id drop default`.execute(db);
  await sql`create trigger responses_stamp_xact before insert on responses
    for each row execute function stamp_writing_transaction()`.execute(db);
  await sql`create trigger response_deletions_stamp_xact before insert on response_deletions
    for each row execute function stamp_writing_transaction()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger responses_stamp_xact on responses`.execute(db);
  await sql`drop trigger response_deletions_stamp_xact on response_deletions`.execute(db);
  await sql`drop function stamp_writing_transaction()`.execute(db);
  await sql`alter table responses alter column xact_id set default pg_current_xact_id()`.execute(db);
  await sql`alter table response_deletions alter column xact_id set default pg_current_xact_id()`.execute(db);
}
