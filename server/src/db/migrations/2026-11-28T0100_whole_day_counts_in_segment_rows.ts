/**
 * The exact daily counts move into `analytics_segment_cells`, as rows under field `#` (value null): one row of
 * code arrays per response instead of one row per answered cell in `analytics_daily_cells`, which goes. Frozen:
 * later changes go into new files.
 *
 * Every stored response appended about five rows to `analytics_daily_cells` (its cells and code −1) in one
 * statement, then one row per subject field to `analytics_segment_cells` in another. The `#` row carries the same
 * codes in the segment table's array form, written by the statement that already writes the segment rows, so a
 * submission makes one insert of a few rows instead of two statements and about ten rows: PostgreSQL's CPU per
 * submission went from about 577 to 490 µs (BENCHMARKS.md, "Request path"). The fold (`compactSegmentCounts`)
 * covers the `#` rows as it covers the others; the per-segment reads name their field and `*`, never `#`.
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  // One connection per node: the function's change and the copy between co-located shards share the migrator's
  // transaction, which Citus can only do sequentially.
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  // One statement per query: Citus propagates each DDL statement to the workers with the text it came in.
  await sql`
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
    end $$`.execute(db);
  // The counts so far, one '#' row per survey and day (codes whose sum is zero are left out, as the fold does).
  await sql`
    insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
    select organization_id, environment, survey_id, '#', null, day, array_agg(code order by code), array_agg(n order by code)
    from (
      select organization_id, environment, survey_id, day, code, sum(n)::bigint as n
      from analytics_daily_cells
      group by organization_id, environment, survey_id, day, code
      having sum(n) <> 0
    ) summed
    group by organization_id, environment, survey_id, day`.execute(db);
  await sql`drop table analytics_daily_cells`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`create table analytics_daily_cells (organization_id text not null, environment text not null,
    survey_id text not null, day date not null, code integer not null, n bigint not null)`.execute(db);
  await sql`create index analytics_daily_cells_by_key on analytics_daily_cells
    (organization_id, environment, survey_id, day, code)`.execute(db);
  await sql`alter table analytics_daily_cells replica identity full`.execute(db);
  if (citus) {
    await sql`select create_distributed_table('analytics_daily_cells', 'organization_id', colocate_with => 'surveys')`.execute(
      db,
    );
  }
  await sql`
    insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
    select organization_id, environment, survey_id, day, u.code, sum(u.n)
    from analytics_segment_cells, unnest(codes, counts) as u(code, n)
    where field = '#'
    group by organization_id, environment, survey_id, day, u.code`.execute(db);
  await sql`delete from analytics_segment_cells where field = '#'`.execute(db);
  await sql`
    create or replace function analytics_count_response(organization text, environment text, survey text, copy record,
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
    end $$`.execute(db);
}
