-- analytics_segment_values: the segment fields of a response's subject, one row per field (department, location,
-- job_title, employment_type, tenure) with its value. Called by analytics_count_response
-- (30_analytics_count_response.sql) for the rows of `analytics_segment_cells`.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_segment_values(department text, location text, job_title text,
                                                    employment_type text, hire_date date, at timestamptz,
                                                    out field text, out value text)
returns setof record
language sql immutable parallel safe
as $$
values ('department', department), ('location', location), ('job_title', job_title),
  ('employment_type', employment_type), ('tenure', analytics_tenure_band(hire_date, at))
$$;
