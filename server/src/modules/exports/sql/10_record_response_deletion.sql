-- The log of deleted responses that incremental exports report (`response_deletions`, modules/exports): trigger
-- `responses_record_deletions` after delete on `responses`, for each row, so every way a response disappears (one
-- delete, a survey's cascade) is logged in the deleting transaction. `deleted_at` is now(), the deleting
-- transaction's start: the same clock rule as an export's watermark. The same response deleted again in the same
-- transaction (re-inserted in between) is one entry. The respondent and the submission time are kept with the entry
-- so that an erasure finds the export files still holding a deleted response of the person (and clears the id).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function record_response_deletion() returns trigger
language plpgsql
as $$
-- Trigger responses_record_deletions: after delete on responses, for each row.
begin
  insert into response_deletions
    (organization_id, environment, survey_id, deleted_at, response_id, respondent_external_id, submitted_at)
  values (old.organization_id, old.environment, old.survey_id, now(), old.id, old.respondent_external_id,
    old.submitted_at)
  on conflict do nothing;
  return null;
end $$;

create or replace trigger responses_record_deletions after delete on responses
  for each row execute function record_response_deletion();
