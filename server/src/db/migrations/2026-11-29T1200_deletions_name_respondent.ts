/**
 * `response_deletions` remembers whose response was deleted, and when it was submitted, for as long as it lists
 * the deletion (30 days): an erasure must find the export files that still hold a response of the person deleted
 * since the file was written (modules/exports `exportsHoldingDeletedOf`), and clears the id again (it is a copy of
 * their identity). Written by the deletion trigger (modules/exports/sql/10_record_response_deletion.sql). Frozen:
 * later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table response_deletions add column respondent_external_id text`.execute(db);
  await sql`alter table response_deletions add column submitted_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The trigger function as it was before (its module file writes the columns dropped here); the next migration to
  // the latest applies the file again (a migration down forgets the repeatable step's checksums).
  await sql`
    create or replace function record_response_deletion() returns trigger
    language plpgsql
    as $$
    begin
      insert into response_deletions (organization_id, environment, survey_id, deleted_at, response_id)
      values (old.organization_id, old.environment, old.survey_id, now(), old.id)
      on conflict do nothing;
      return null;
    end $$`.execute(db);
  await sql`alter table response_deletions drop column submitted_at`.execute(db);
  await sql`alter table response_deletions drop column respondent_external_id`.execute(db);
}
