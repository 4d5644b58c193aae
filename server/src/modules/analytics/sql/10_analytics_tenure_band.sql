-- analytics_tenure_band: the tenure band (segment field `tenure`) of a hire date at a moment, compared in UTC so that
-- the band never depends on a session's TimeZone. Called by analytics_segment_values (the per-segment counts the
-- triggers append) and by the analytics scans (modules/analytics/repository.ts), so both band alike.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_tenure_band(hire_date date, at timestamptz) returns text
language sql immutable parallel safe
as $$
select case
  when hire_date is null then null
  when (at at time zone 'UTC') < hire_date + interval '1 year' then 'under_1_year'
  when (at at time zone 'UTC') < hire_date + interval '2 years' then '1_to_2_years'
  when (at at time zone 'UTC') < hire_date + interval '5 years' then '2_to_5_years'
  when (at at time zone 'UTC') < hire_date + interval '10 years' then '5_to_10_years'
  else '10_years_or_more' end
$$;
