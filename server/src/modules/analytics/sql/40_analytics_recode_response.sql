-- The analytics copy of an edited response: trigger `analytics_responses_update` after update on `responses`, for each
-- row. Its answers are encoded again and its submission time, respondent and distribution follow the new row, but
-- its subject stays as stored. The counts move by the old cells out (-1) and the new cells in (+1), under that same
-- subject (analytics_count_response). Forgetting who gave a response (an erasure, retention's anonymizing:
-- forgetRespondentOfResponses in modules/surveys) is such an update.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_recode_response() returns trigger
language plpgsql
as $$
-- Trigger analytics_responses_update: after update on responses, for each row.
declare
  before record;
  after record;
begin
  select a.submitted_at, a.cells, a.external_id, a.department, a.location, a.job_title, a.hire_date,
         a.employment_type
  into before
  from analytics_responses a
  where a.organization_id = old.organization_id and a.environment = old.environment
    and a.survey_id = old.survey_id and a.response_id = old.id;
  if not found then
    return null;
  end if;
  -- The copy re-encoded from the new row, in place; the subject columns are not touched.
  update analytics_responses a
  set nums = e.nums, cells = e.cells, submitted_at = new.submitted_at,
      respondent_external_id = new.respondent_external_id, distribution_id = new.distribution_id
  from surveys s
    cross join analytics_encode(new.answers, s.questions) e
  where s.organization_id = new.organization_id and s.environment = new.environment and s.id = new.survey_id
    and a.organization_id = s.organization_id and a.environment = s.environment
    and a.survey_id = old.survey_id and a.response_id = old.id
  returning a.submitted_at, a.cells, a.external_id, a.department, a.location, a.job_title, a.hire_date,
            a.employment_type
  into after;
  if found and (before.submitted_at, before.cells) is distinct from (after.submitted_at, after.cells) then
    perform analytics_count_response(old.organization_id, old.environment, old.survey_id, before, -1);
    perform analytics_count_response(old.organization_id, old.environment, old.survey_id, after, 1);
  end if;
  return null;
end $$;

create or replace trigger analytics_responses_update after update on responses
  for each row execute function analytics_recode_response();
