-- analytics_count_response: appends the deltas of one typed copy to the exact counts `analytics_segment_cells`
-- (docs/decisions/0024-analytics-exact-counts.md). `copy` carries the copy's submission time, cells and subject;
-- `sign` is +1 when the copy is stored and -1 when it goes. Called by the triggers of `responses`
-- (40_analytics_copy_response.sql, 40_analytics_drop_response.sql, 40_analytics_recode_response.sql).
--
-- Rows are append-only deltas, summed on read, so no two transactions ever wait on one counter row; the
-- analytics.compact job folds each key's rows into one, leaving every sum unchanged.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_count_response(organization text, environment text, survey text, copy record,
                                                    sign integer) returns void
language plpgsql
as $$
-- Appends the deltas of one typed copy (its submission time, cells and subject), sign +1 when it is stored and
-- -1 when it goes, as rows of analytics_segment_cells: one under field '#' (the whole survey's day), then one
-- per field of the subject, or one under '*' without a subject. Each holds every cell code and code -1 (the
-- response itself).
begin
  insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
  select organization, environment, survey, f.field, f.value, (copy.submitted_at at time zone 'UTC')::date,
         array_append(copy.cells, -1), array_fill(sign::bigint, array[cardinality(copy.cells) + 1])
  from (
    select '#' as field, null as value
    union all
    select v.field, v.value
    from analytics_segment_values(copy.department, copy.location, copy.job_title, copy.employment_type,
                                  copy.hire_date, copy.submitted_at) v
    where copy.external_id is not null
    union all
    select '*', null
    where copy.external_id is null
  ) f;
end $$;
