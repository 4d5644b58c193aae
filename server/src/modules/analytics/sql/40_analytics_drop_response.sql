-- The analytics copy of a deleted response: trigger `analytics_responses_delete` after delete on `responses`, for each
-- row (every way a response goes: modules/surveys' removeResponse, a survey's or an organization's cascade).
--
-- Deletes the typed copy from `analytics_responses` and appends -1 deltas of its cells (analytics_count_response),
-- under the subject it was stored with (read from the copy, never resolved again).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_drop_response() returns trigger
language plpgsql
as $$
-- Trigger analytics_responses_delete: after delete on responses, for each row.
declare
  copy record;
begin
  delete from analytics_responses a
  where a.organization_id = old.organization_id and a.environment = old.environment
    and a.survey_id = old.survey_id and a.response_id = old.id
  returning a.submitted_at, a.cells, a.external_id, a.department, a.location, a.job_title, a.hire_date,
            a.employment_type
  into copy;
  if found then
    perform analytics_count_response(old.organization_id, old.environment, old.survey_id, copy, -1);
  end if;
  return null;
end $$;

create or replace trigger analytics_responses_delete after delete on responses
  for each row execute function analytics_drop_response();
