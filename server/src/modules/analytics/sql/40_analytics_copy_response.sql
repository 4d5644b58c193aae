-- The analytics copy of a new response: trigger `analytics_responses_insert` after insert on `responses`, for each
-- row, so every way a response is stored (store_response, modules/surveys/sql/30_store_response.sql; an import)
-- writes its copy and its counts in the same transaction (docs/decisions/0024-analytics-exact-counts.md).
--
-- Stores the typed copy in `analytics_responses`: the answers encoded (analytics_encode: `nums` and `cells`), the
-- SUBJECT, the respondent's fields as they are now, which nothing moves afterwards (docs/decisions/
-- 0025-segments-as-asked.md): the snapshot of the respondent in the distribution the response answers (`dr`) when
-- that snapshot holds them, else the respondent's record (`p`), else none (an unknown or absent respondent); and
-- the subject's manager chain (respondent_manager_chain). Then appends +1 deltas of its cells
-- (analytics_count_response).
--
-- A row trigger of plain statements, each reading or writing one row of one table by its key, rather than a
-- statement trigger or one INSERT ... SELECT joining four tables: on Citus it runs on the node of the response's
-- shard, where the co-located shards of the other tables are, and touches only them (docs/decisions/
-- 0059-citus-single-shard-requests.md; created there with `citus.enable_unsafe_triggers`).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_copy_response() returns trigger
language plpgsql
as $$
-- Trigger analytics_responses_insert: after insert on responses, for each row.
declare
  questions jsonb;
  encoded record;
  subject record;
  copy record;
begin
  select s.questions into questions
  from surveys s
  where s.organization_id = new.organization_id and s.environment = new.environment and s.id = new.survey_id;
  if not found then
    return null;
  end if;
  encoded := analytics_encode(new.answers, questions);
  -- The subject: the distribution's snapshot of the respondent, else their record, else none.
  select null::text as external_id, null::text as email, null::text as first_name, null::text as last_name,
         null::text as department, null::text as location, null::text as job_title, null::text as manager_id,
         null::date as hire_date, null::text as employment_type, null::jsonb as attributes
  into subject;
  if new.respondent_external_id is not null and new.distribution_id is not null then
    select dr.external_id, dr.email, dr.first_name, dr.last_name, dr.department, dr.location, dr.job_title,
           dr.manager_id, dr.hire_date, dr.employment_type, dr.attributes
    into subject
    from distribution_recipients dr
    where dr.organization_id = new.organization_id and dr.environment = new.environment
      and dr.distribution_id = new.distribution_id and dr.external_id = new.respondent_external_id;
  end if;
  if new.respondent_external_id is not null and subject.external_id is null then
    select p.external_id, p.email, p.first_name, p.last_name, p.department, p.location, p.job_title,
           p.manager_id, p.hire_date, p.employment_type, p.attributes
    into subject
    from respondents p
    where p.organization_id = new.organization_id and p.environment = new.environment
      and p.external_id = new.respondent_external_id;
  end if;
  insert into analytics_responses
    (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at,
     nums, cells,
     external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
     employment_type, attributes, manager_chain)
  values (new.organization_id, new.environment, new.survey_id, new.id, new.respondent_external_id,
          new.distribution_id, new.submitted_at, encoded.nums, encoded.cells,
          subject.external_id, subject.email, subject.first_name, subject.last_name, subject.department,
          subject.location, subject.job_title, subject.manager_id, subject.hire_date, subject.employment_type,
          subject.attributes,
          -- The chain as it is now, frozen with the subject; no lookup without a manager.
          case when subject.manager_id is not null then
            respondent_manager_chain(new.organization_id, new.environment, subject.external_id, subject.manager_id)
          end)
  returning submitted_at, cells, external_id, department, location, job_title, hire_date, employment_type
  into copy;
  perform analytics_count_response(new.organization_id, new.environment, new.survey_id, copy, 1);
  return null;
end $$;

create or replace trigger analytics_responses_insert after insert on responses
  for each row execute function analytics_copy_response();
