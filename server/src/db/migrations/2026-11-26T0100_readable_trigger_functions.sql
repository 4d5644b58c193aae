-- Every trigger function of the schema, written to be read. Run by 2026-11-26T0100_readable_trigger_functions.ts.
--
-- Same names, signatures, language and attributes (volatile, security invoker, no settings) and the same
-- statements, token for token, as the functions this replaces (2026-11-24T0200_idempotency_lease,
-- 2026-11-24T0500_exports, 2026-11-25T0800_segments_when_asked); only the layout and the comments differ.
-- The `create trigger` statements that call them are unchanged (they stay in those migrations).
--
-- Frozen like every migration: a later change to a function goes into a new migration (copy the function from
-- here or from docs/schema.sql, which shows the current text of all of them).


-- ---------------------------------------------------------------------------------------------------------------
-- API key cache
-- ---------------------------------------------------------------------------------------------------------------

-- Announces a changed or deleted API key to every process's key cache.
create or replace function survey_service_key_changed() returns trigger
language plpgsql
as $$
-- Trigger api_keys_changed: after update or delete on api_keys, for each row.
--
-- Every process caches API keys (modules/api-keys/key-cache.ts). Any change that matters to authentication (a
-- revocation, new scopes, a new expiry), whoever makes it (API, CLI, plain SQL), is announced on the
-- `survey_service_keys` channel as `key:<key_hash>`, and each process drops that entry. A write that changes only
-- the bookkeeping column `last_used_at` is not announced: it happens on most requests and changes no answer.
begin
  if tg_op = 'DELETE'
     or (to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at') then
    perform pg_notify('survey_service_keys', 'key:' || old.key_hash);
  end if;
  return null;
end $$;

-- Announces a changed or deleted organization to every process's key cache.
create or replace function survey_service_organization_changed() returns trigger
language plpgsql
as $$
-- Trigger organizations_changed: after update or delete on organizations, for each row.
--
-- An organization's plan and limits are cached with each of its keys, so any change to the organization is
-- announced on `survey_service_keys` as `org:<id>`, and each process drops every cached key of that organization.
begin
  perform pg_notify('survey_service_keys', 'org:' || old.id);
  return null;
end $$;


-- ---------------------------------------------------------------------------------------------------------------
-- Deleted responses, for incremental exports
-- ---------------------------------------------------------------------------------------------------------------

-- Keeps `response_deletions`, the log of deleted responses that incremental exports report.
create or replace function record_response_deletions() returns trigger
language plpgsql
as $$
-- Trigger responses_record_deletions: after delete on responses, for each statement
-- (transition table `deleted_responses`).
--
-- Logs every way a response disappears (one delete, a survey's cascade) in `response_deletions`, in the deleting
-- transaction, so that an incremental export can report it. `deleted_at` is now(), the deleting transaction's
-- start: the same clock rule as an export's watermark. The same response deleted again in the same transaction
-- (re-inserted in between) is one entry.
begin
  insert into response_deletions (organization_id, environment, survey_id, deleted_at, response_id)
  select organization_id, environment, survey_id, now(), id
  from deleted_responses
  on conflict do nothing;
  return null;
end $$;


-- ---------------------------------------------------------------------------------------------------------------
-- Analytics: the typed copy of responses and its exact counts
-- ---------------------------------------------------------------------------------------------------------------
--
-- Three statement-level triggers on `responses` keep, in the writing transaction:
-- - `analytics_responses`: one typed row per response, its answers encoded by analytics_encode(answers, questions)
--   (`nums`: the nps/rating values; `cells`: one code per answered cell) and its SUBJECT: the respondent's fields
--   as they were when the response was stored, which nothing moves afterwards. The subject is the snapshot of the
--   respondent in the distribution the response answers (`distribution_recipients`, alias `dr`) when that
--   snapshot holds them, else the respondent's record (`respondents`, alias `p`), else none (all null: an
--   unknown or absent respondent).
-- - `analytics_daily_cells`: per survey, UTC day and cell code, how many responses carry it (code -1: the
--   responses themselves).
-- - `analytics_segment_cells`: the same per subject field and value (`department`, `location`, `job_title`,
--   `employment_type`, and `tenure`: the band of `hire_date` at submission; see analytics_segment_values). A
--   response without a subject is counted once, under field `*`, which readers add to the null group of
--   whichever field they read.
-- Both count tables hold append-only deltas (a deletion appends negative counts), summed on read, so no two
-- transactions ever wait on one counter row; the analytics.compact job folds each key's rows into one.
--
-- `responses.distribution_id` is read as to_jsonb(row)->>'distribution_id', so that these functions do not break
-- should that column ever be renamed or dropped.
--
-- Sizes: PL/pgSQL plans a statement once per connection, for the size its transition tables had then, and keeps
-- that plan. A plan made for one row joins two 1,000-row tables by a nested loop; one made for 100,000 rows may
-- scan a whole table for each later single row. So a single row (the common case: one submission) runs the
-- statement directly and keeps its cached plan, and a batch runs it through EXECUTE, planned for its own size.
-- The single-row statement also appends its segment deltas ungrouped (one row per field, the response's cells as
-- they are: its codes are distinct), which skips two sorts and aggregations; the batch statement groups them per
-- key and drops contributions that cancel out.

-- Analytics of stored responses: their typed copy and +1 counts.
create or replace function analytics_responses_added() returns trigger
language plpgsql
as $$
-- Trigger analytics_responses_insert: after insert on responses, for each statement (transition table `added`).
--
-- Stores the typed copy of each added response in `analytics_responses`: its answers encoded
-- (analytics_encode: `nums`, the nps/rating values; `cells`, one code per answered cell) and its SUBJECT, the
-- respondent's fields as they are now, which nothing moves afterwards: the snapshot of the respondent in the
-- distribution the response answers (`dr`) when that snapshot holds them, else the respondent's record (`p`),
-- else none (an unknown or absent respondent). Then appends +1 deltas of its cells to `analytics_daily_cells`
-- and, per field of the subject, to `analytics_segment_cells` (under field `*` without a subject).
--
-- One row takes the plain statement, whose plan PL/pgSQL caches per connection; a batch goes through EXECUTE so
-- that it is planned for its own size (a plan cached for one row would join big batches by nested loops, and one
-- cached for a big batch would scan whole tables for later single rows).
begin
  if not exists (select 1 from added offset 1) then
    -- One response: a plain statement, with PL/pgSQL's cached plan; segment deltas ungrouped.
    with copied as (
      -- The typed copy, with the subject: the distribution's snapshot (dr) when it holds the respondent, else the
      -- respondent's record (p).
      insert into analytics_responses
        (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at,
         nums, cells,
         external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
         employment_type, attributes)
      select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id,
             -- responses.distribution_id, read by name so that a rename or removal of that column breaks nothing
             to_jsonb(r)->>'distribution_id',
             r.submitted_at, e.nums, e.cells,
             case when dr.external_id is not null then dr.external_id else p.external_id end,
             case when dr.external_id is not null then dr.email else p.email end,
             case when dr.external_id is not null then dr.first_name else p.first_name end,
             case when dr.external_id is not null then dr.last_name else p.last_name end,
             case when dr.external_id is not null then dr.department else p.department end,
             case when dr.external_id is not null then dr.location else p.location end,
             case when dr.external_id is not null then dr.job_title else p.job_title end,
             case when dr.external_id is not null then dr.manager_id else p.manager_id end,
             case when dr.external_id is not null then dr.hire_date else p.hire_date end,
             case when dr.external_id is not null then dr.employment_type else p.employment_type end,
             case when dr.external_id is not null then dr.attributes else p.attributes end
      from added r
        join surveys s
          on s.organization_id = r.organization_id and s.environment = r.environment and s.id = r.survey_id
        cross join analytics_encode(r.answers, s.questions) e
        left join distribution_recipients dr
          on dr.organization_id = r.organization_id and dr.environment = r.environment
          and dr.distribution_id = to_jsonb(r)->>'distribution_id' and dr.external_id = r.respondent_external_id
        left join respondents p
          on p.organization_id = r.organization_id and p.environment = r.environment
          and p.external_id = r.respondent_external_id
      returning organization_id, environment, survey_id, submitted_at, cells,
                external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
                employment_type, attributes
    ), daily as (
      -- Daily counts: +1 for each cell code, and for code -1 (the response itself).
      insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
      select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, count(*)
      from copied, unnest(array_append(cells, -1)) as code
      group by 1, 2, 3, 4, 5)
    -- Segment counts: one row per field of the subject (or one under `*` without a subject), holding all the
    -- response's codes at +1.
    insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
    select s.organization_id, s.environment, s.survey_id, f.field, f.value, (s.submitted_at at time zone 'UTC')::date,
           array_append(s.cells, -1), array_fill(s.sign::bigint, array[cardinality(s.cells) + 1])
    from (
        select organization_id, environment, survey_id, submitted_at, cells,
               external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
               employment_type, attributes,
               1 as sign
        from copied
      ) s
      cross join lateral (
        select v.field, v.value
        from analytics_segment_values(s.department, s.location, s.job_title, s.employment_type, s.hire_date,
                                      s.submitted_at) v
        where s.external_id is not null
        union all
        select '*', null
        where s.external_id is null
      ) f;
  else
    -- A batch: the same copy and daily counts through EXECUTE (planned for this batch's size); segment deltas
    -- grouped per key.
    execute $q$
    with copied as (
      insert into analytics_responses
        (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at,
         nums, cells,
         external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
         employment_type, attributes)
      select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id,
             to_jsonb(r)->>'distribution_id',
             r.submitted_at, e.nums, e.cells,
             case when dr.external_id is not null then dr.external_id else p.external_id end,
             case when dr.external_id is not null then dr.email else p.email end,
             case when dr.external_id is not null then dr.first_name else p.first_name end,
             case when dr.external_id is not null then dr.last_name else p.last_name end,
             case when dr.external_id is not null then dr.department else p.department end,
             case when dr.external_id is not null then dr.location else p.location end,
             case when dr.external_id is not null then dr.job_title else p.job_title end,
             case when dr.external_id is not null then dr.manager_id else p.manager_id end,
             case when dr.external_id is not null then dr.hire_date else p.hire_date end,
             case when dr.external_id is not null then dr.employment_type else p.employment_type end,
             case when dr.external_id is not null then dr.attributes else p.attributes end
      from added r
        join surveys s
          on s.organization_id = r.organization_id and s.environment = r.environment and s.id = r.survey_id
        cross join analytics_encode(r.answers, s.questions) e
        left join distribution_recipients dr
          on dr.organization_id = r.organization_id and dr.environment = r.environment
          and dr.distribution_id = to_jsonb(r)->>'distribution_id' and dr.external_id = r.respondent_external_id
        left join respondents p
          on p.organization_id = r.organization_id and p.environment = r.environment
          and p.external_id = r.respondent_external_id
      returning organization_id, environment, survey_id, submitted_at, cells,
                external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
                employment_type, attributes
    ), daily as (
      insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
      select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, count(*)
      from copied, unnest(array_append(cells, -1)) as code
      group by 1, 2, 3, 4, 5)
    -- Segment counts: one row per key (survey, field, value, day), its codes sorted with their summed counts.
    insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
    select organization_id, environment, survey_id, field, value, day,
           array_agg(code order by code), array_agg(n order by code)
    from (
      select s.organization_id, s.environment, s.survey_id, f.field, f.value,
             (s.submitted_at at time zone 'UTC')::date as day, code, sum(s.sign)::bigint as n
      from (
          select organization_id, environment, survey_id, submitted_at, cells,
                 external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
                 employment_type, attributes,
                 1 as sign
          from copied
        ) s
        cross join lateral (
          select v.field, v.value
          from analytics_segment_values(s.department, s.location, s.job_title, s.employment_type, s.hire_date,
                                        s.submitted_at) v
          where s.external_id is not null
          union all
          select '*', null
          where s.external_id is null
        ) f
        cross join lateral unnest(array_append(s.cells, -1)) as code
      group by 1, 2, 3, 4, 5, 6, 7
      having sum(s.sign) <> 0
    ) g
    group by 1, 2, 3, 4, 5, 6$q$;
  end if;
  return null;
end $$;

-- Analytics of deleted responses: their typed copy removed, -1 counts.
create or replace function analytics_responses_removed() returns trigger
language plpgsql
as $$
-- Trigger analytics_responses_delete: after delete on responses, for each statement (transition table `removed`).
--
-- Deletes the typed copy of each removed response from `analytics_responses` and appends -1 deltas of its cells
-- to the daily and segment counts, under the subject it was stored with (read from the copy, never resolved
-- again). One row or a batch: as in analytics_responses_added.
begin
  if not exists (select 1 from removed offset 1) then
    -- One response: a plain statement, with PL/pgSQL's cached plan; segment deltas ungrouped.
    with dropped as (
      delete from analytics_responses a
      using removed r
      where a.organization_id = r.organization_id and a.environment = r.environment
        and a.survey_id = r.survey_id and a.response_id = r.id
      returning a.organization_id, a.environment, a.survey_id, a.submitted_at, a.cells,
                a.external_id, a.email, a.first_name, a.last_name, a.department, a.location, a.job_title,
                a.manager_id, a.hire_date, a.employment_type, a.attributes
    ), daily as (
      -- Daily counts: -1 for each cell code, and for code -1 (the response itself).
      insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
      select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, -count(*)
      from dropped, unnest(array_append(cells, -1)) as code
      group by 1, 2, 3, 4, 5)
    -- Segment counts: one row per field of the stored subject (or one under `*`), all the codes at -1.
    insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
    select s.organization_id, s.environment, s.survey_id, f.field, f.value, (s.submitted_at at time zone 'UTC')::date,
           array_append(s.cells, -1), array_fill(s.sign::bigint, array[cardinality(s.cells) + 1])
    from (
        select organization_id, environment, survey_id, submitted_at, cells,
               external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
               employment_type, attributes,
               -1 as sign
        from dropped
      ) s
      cross join lateral (
        select v.field, v.value
        from analytics_segment_values(s.department, s.location, s.job_title, s.employment_type, s.hire_date,
                                      s.submitted_at) v
        where s.external_id is not null
        union all
        select '*', null
        where s.external_id is null
      ) f;
  else
    -- A batch: through EXECUTE (planned for this batch's size); segment deltas grouped per key.
    execute $q$
    with dropped as (
      delete from analytics_responses a
      using removed r
      where a.organization_id = r.organization_id and a.environment = r.environment
        and a.survey_id = r.survey_id and a.response_id = r.id
      returning a.organization_id, a.environment, a.survey_id, a.submitted_at, a.cells,
                a.external_id, a.email, a.first_name, a.last_name, a.department, a.location, a.job_title,
                a.manager_id, a.hire_date, a.employment_type, a.attributes
    ), daily as (
      insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
      select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, -count(*)
      from dropped, unnest(array_append(cells, -1)) as code
      group by 1, 2, 3, 4, 5)
    insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
    select organization_id, environment, survey_id, field, value, day,
           array_agg(code order by code), array_agg(n order by code)
    from (
      select s.organization_id, s.environment, s.survey_id, f.field, f.value,
             (s.submitted_at at time zone 'UTC')::date as day, code, sum(s.sign)::bigint as n
      from (
          select organization_id, environment, survey_id, submitted_at, cells,
                 external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
                 employment_type, attributes,
                 -1 as sign
          from dropped
        ) s
        cross join lateral (
          select v.field, v.value
          from analytics_segment_values(s.department, s.location, s.job_title, s.employment_type, s.hire_date,
                                        s.submitted_at) v
          where s.external_id is not null
          union all
          select '*', null
          where s.external_id is null
        ) f
        cross join lateral unnest(array_append(s.cells, -1)) as code
      group by 1, 2, 3, 4, 5, 6, 7
      having sum(s.sign) <> 0
    ) g
    group by 1, 2, 3, 4, 5, 6$q$;
  end if;
  return null;
end $$;

-- Analytics of edited responses: their typed copy re-encoded, counts moved from the old cells to the new.
create or replace function analytics_responses_replaced() returns trigger
language plpgsql
as $$
-- Trigger analytics_responses_update: after update on responses, for each statement
-- (transition tables `removed`: the rows before, `added`: the rows after).
--
-- An edited response (no API operation does this; SQL or a later feature may): its answers are encoded again
-- and its submission time, respondent and distribution follow the new row, but its subject stays as stored. The
-- counts move by the old cells out (-1) and the new cells in (+1), under that same subject; always grouped, so
-- an edit that changes nothing appends nothing.
begin
  with old_copy as (
    -- The typed copies as they were before this statement.
    select a.*
    from analytics_responses a
      join removed r
        on a.organization_id = r.organization_id and a.environment = r.environment and a.survey_id = r.survey_id
        and a.response_id = r.id
  ), recoded as (
    -- The copies re-encoded from the new rows, in place; the subject columns are not touched.
    update analytics_responses a
    set nums = e.nums, cells = e.cells, submitted_at = n.submitted_at,
        respondent_external_id = n.respondent_external_id, distribution_id = to_jsonb(n)->>'distribution_id'
    from added n
      join surveys s
        on s.organization_id = n.organization_id and s.environment = n.environment and s.id = n.survey_id
      cross join analytics_encode(n.answers, s.questions) e
    where a.organization_id = n.organization_id and a.environment = n.environment and a.survey_id = n.survey_id
      and a.response_id = n.id
    returning a.organization_id, a.environment, a.survey_id, a.submitted_at, a.cells,
              a.external_id, a.email, a.first_name, a.last_name, a.department, a.location, a.job_title,
              a.manager_id, a.hire_date, a.employment_type, a.attributes
  ), daily_out as (
    -- Daily counts: the old cells out...
    insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
    select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, -count(*)
    from old_copy, unnest(array_append(cells, -1)) as code
    group by 1, 2, 3, 4, 5
  ), daily_in as (
    -- ...and the new cells in.
    insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
    select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, count(*)
    from recoded, unnest(array_append(cells, -1)) as code
    group by 1, 2, 3, 4, 5)
  -- Segment counts: old (-1) and new (+1) together, grouped per key; what cancels out is not written.
  insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
  select organization_id, environment, survey_id, field, value, day,
         array_agg(code order by code), array_agg(n order by code)
  from (
    select s.organization_id, s.environment, s.survey_id, f.field, f.value,
           (s.submitted_at at time zone 'UTC')::date as day, code, sum(s.sign)::bigint as n
    from (
        select organization_id, environment, survey_id, submitted_at, cells,
               external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
               employment_type, attributes,
               -1 as sign
        from old_copy
        union all
        select organization_id, environment, survey_id, submitted_at, cells,
               external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
               employment_type, attributes,
               1 as sign
        from recoded
      ) s
      cross join lateral (
        select v.field, v.value
        from analytics_segment_values(s.department, s.location, s.job_title, s.employment_type, s.hire_date,
                                      s.submitted_at) v
        where s.external_id is not null
        union all
        select '*', null
        where s.external_id is null
      ) f
      cross join lateral unnest(array_append(s.cells, -1)) as code
    group by 1, 2, 3, 4, 5, 6, 7
    having sum(s.sign) <> 0
  ) g
  group by 1, 2, 3, 4, 5, 6;
  return null;
end $$;
