/**
 * The triggers of `responses` (the analytics copy and counts, the deletion log) fire per row instead of per
 * statement, so that they run on Citus. Frozen: later changes go into new files.
 *
 * A statement trigger reads its transition table, which Citus cannot plan once the tables it writes are
 * distributed; a row trigger reads NEW and OLD and names one tenant in each statement, which Citus routes to the
 * shard's own node (docs/DECISIONS.md, "Citus: triggers"). The sibling file holds the functions and the
 * triggers; behaviour is the same, one response at a time.
 */
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = readFileSync(new URL('./2026-11-26T0400_response_row_triggers.sql', import.meta.url), 'utf8');
  await sql.raw(statements).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger analytics_responses_insert on responses;
    drop trigger analytics_responses_delete on responses;
    drop trigger analytics_responses_update on responses;
    drop trigger responses_record_deletions on responses;
    drop function analytics_copy_response();
    drop function analytics_drop_response();
    drop function analytics_recode_response();
    drop function record_response_deletion();
    drop function analytics_count_response(text, text, text, record, integer);
  `.execute(db);
  // The statement triggers' functions, as 2026-11-26T0100 wrote them (that file also re-creates functions that
  // exist or that nothing calls any more; `create or replace` makes that harmless).
  const functions = readFileSync(new URL('./2026-11-26T0100_readable_trigger_functions.sql', import.meta.url), 'utf8');
  await sql.raw(functions).execute(db);
  await sql`
    create trigger analytics_responses_insert after insert on responses
      referencing new table as added for each statement execute function analytics_responses_added();
    create trigger analytics_responses_delete after delete on responses
      referencing old table as removed for each statement execute function analytics_responses_removed();
    create trigger analytics_responses_update after update on responses
      referencing old table as removed new table as added for each statement
      execute function analytics_responses_replaced();
    create trigger responses_record_deletions after delete on responses
      referencing old table as deleted_responses for each statement execute function record_response_deletions();
  `.execute(db);
}
