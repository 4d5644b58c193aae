-- The analytics copy and counts and the deletion log of `responses`, as row triggers. Run by
-- 2026-11-26T0400_response_row_triggers.ts.
--
-- The statement triggers they replace (transition tables `added`, `removed`, `deleted_responses`) cannot run on
-- Citus: on a shard's node, every statement of a trigger function that names a distributed table is planned by
-- Citus, and Citus cannot plan a statement that reads a transition table. A row trigger reads NEW and OLD, plain
-- values, and each of its statements names one tenant (the row's `organization_id`): on Citus it runs on the
-- node of the response's shard, where the co-located shards of the other tables are, and touches only them.
-- Same copy, same counts, same log as before; what changes is the grain: one response at a time, so a batch
-- (a survey's cascade, a bulk insert by SQL) costs one trigger call per response instead of one per statement.
--
-- Frozen like every migration: a later change goes into a new migration (docs/schema.sql shows the current text).


-- Stores the typed copy of a new response in `analytics_responses`: its answers encoded (analytics_encode: `nums`,
-- the nps/rating values; `cells`, one code per answered cell) and its SUBJECT, the respondent's fields as they
-- are now, which nothing moves afterwards: the snapshot of the respondent in the distribution the response
-- answers (`dr`) when that snapshot holds them, else the respondent's record (`p`), else none (an unknown or
-- absent respondent). Then appends +1 deltas of its cells to `analytics_daily_cells` and, per field of the
-- subject, to `analytics_segment_cells` (under field `*` without a subject).
--
-- Plain statements that each read or write one row of one table by its key, rather than one INSERT ... SELECT
-- joining four tables: on a shard's node, Citus plans a trigger's statement with NEW's values as parameters and
-- refuses that join ("complex joins are only supported when ..."), while a lookup by key goes to the local shard.
create function analytics_copy_response() returns trigger
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
     employment_type, attributes)
  values (new.organization_id, new.environment, new.survey_id, new.id, new.respondent_external_id,
          new.distribution_id, new.submitted_at, encoded.nums, encoded.cells,
          subject.external_id, subject.email, subject.first_name, subject.last_name, subject.department,
          subject.location, subject.job_title, subject.manager_id, subject.hire_date, subject.employment_type,
          subject.attributes)
  returning submitted_at, cells, external_id, department, location, job_title, hire_date, employment_type
  into copy;
  perform analytics_count_response(new.organization_id, new.environment, new.survey_id, copy, 1);
  return null;
end $$;


-- Appends the deltas of one typed copy (`copy`: its submission time, cells and subject), `sign` +1 when it is
-- stored and -1 when it goes: to the daily counts, each cell code and code -1 (the response itself), and to the
-- segment counts, one row per field of the subject (or one under `*` without a subject) holding all its codes.
create function analytics_count_response(organization text, environment text, survey text, copy record,
                                         sign integer) returns void
language plpgsql
as $$
begin
  insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
  select organization, environment, survey, (copy.submitted_at at time zone 'UTC')::date, code, sign * count(*)
  from unnest(array_append(copy.cells, -1)) as code
  group by code;
  insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
  select organization, environment, survey, f.field, f.value, (copy.submitted_at at time zone 'UTC')::date,
         array_append(copy.cells, -1), array_fill(sign::bigint, array[cardinality(copy.cells) + 1])
  from (
    select v.field, v.value
    from analytics_segment_values(copy.department, copy.location, copy.job_title, copy.employment_type,
                                  copy.hire_date, copy.submitted_at) v
    where copy.external_id is not null
    union all
    select '*', null
    where copy.external_id is null
  ) f;
end $$;


-- Deletes the typed copy of a removed response from `analytics_responses` and appends -1 deltas of its cells to
-- the daily and segment counts, under the subject it was stored with (read from the copy, never resolved again).
create function analytics_drop_response() returns trigger
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


-- An edited response (no API operation does this; SQL or a later feature may): its answers are encoded again and
-- its submission time, respondent and distribution follow the new row, but its subject stays as stored. The
-- counts move by the old cells out (-1) and the new cells in (+1), under that same subject.
create function analytics_recode_response() returns trigger
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


-- Logs every way a response disappears (one delete, a survey's cascade) in `response_deletions`, in the deleting
-- transaction, so that an incremental export can report it. `deleted_at` is now(), the deleting transaction's
-- start: the same clock rule as an export's watermark. The same response deleted again in the same transaction
-- (re-inserted in between) is one entry.
create function record_response_deletion() returns trigger
language plpgsql
as $$
-- Trigger responses_record_deletions: after delete on responses, for each row.
begin
  insert into response_deletions (organization_id, environment, survey_id, deleted_at, response_id)
  values (old.organization_id, old.environment, old.survey_id, now(), old.id)
  on conflict do nothing;
  return null;
end $$;


drop trigger analytics_responses_insert on responses;
drop trigger analytics_responses_delete on responses;
drop trigger analytics_responses_update on responses;
drop trigger responses_record_deletions on responses;
drop function analytics_responses_added();
drop function analytics_responses_removed();
drop function analytics_responses_replaced();
drop function record_response_deletions();


create trigger analytics_responses_insert after insert on responses
  for each row execute function analytics_copy_response();
create trigger analytics_responses_delete after delete on responses
  for each row execute function analytics_drop_response();
create trigger analytics_responses_update after update on responses
  for each row execute function analytics_recode_response();
create trigger responses_record_deletions after delete on responses
  for each row execute function record_response_deletion();
