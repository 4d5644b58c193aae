/**
 * Segments are fixed when a person is asked. Frozen: later changes go into new files.
 *
 * Until now a response without a snapshot of its own was segmented by its respondent's CURRENT record, so a move
 * after a survey rewrote its past results (and triggers on `respondents` moved the counts of every such
 * response). Now the typed copy `analytics_responses` holds the respondent's fields as they were when the
 * response was stored — the subject — and nothing ever moves them:
 * - the snapshot of the distribution the response answers (`responses.distribution_id`, which the single
 *   response writer sets: the answer page's distribution, or for an API submission the latest distribution of
 *   the survey that reached the respondent before they answered), when that snapshot holds the respondent;
 * - else the respondent's record at that moment;
 * - else none (an unknown or absent respondent): `external_id` null, under field `*` in the counts.
 * The subject columns carry the respondent columns' names, so targeting filters compile over the copy itself.
 *
 * The response triggers write the subject with the copy; the respondent triggers and the tenant advisory lock
 * that ordered them against submissions are gone (a respondent change now touches no analytics row, so it has
 * nothing to race). An edited response keeps its subject: one update trigger re-encodes answers in place.
 */
import { sql, type Kysely } from 'kysely';

/** The respondent columns of a subject (as `respondents` and `distribution_recipients` name them). */
const subjectColumns = ['external_id', 'email', 'first_name', 'last_name', 'department', 'location', 'job_title', 'manager_id', 'hire_date', 'employment_type', 'attributes'];
const subjectTypes: Record<string, string> = { hire_date: 'date', attributes: 'jsonb' };
const segmentFields = ['department', 'location', 'job_title', 'employment_type', 'hire_date'];

/** The subject of response row `r`: its distribution's snapshot of the respondent, else the record. */
const subjectOf = (r: string) => `
  left join distribution_recipients dr on dr.organization_id = ${r}.organization_id and dr.environment = ${r}.environment
    and dr.distribution_id = to_jsonb(${r})->>'distribution_id' and dr.external_id = ${r}.respondent_external_id
  left join respondents p on p.organization_id = ${r}.organization_id and p.environment = ${r}.environment
    and p.external_id = ${r}.respondent_external_id`;
const subjectValues = subjectColumns.map((c) => `case when dr.external_id is not null then dr.${c} else p.${c} end`).join(', ');

/**
 * Appends the per-segment deltas of `source` (rows with organization_id, environment, survey_id, external_id,
 * submitted_at, cells, sign and the segment columns). As in 2026-11-25T0300: one row per response and field
 * when ungrouped (a single submission), grouped per key otherwise; a response without a subject counts once,
 * under `*`.
 */
function appendDeltas(source: string, grouped: boolean): string {
  const values = `cross join lateral (
          select v.field, v.value from analytics_segment_values(${segmentFields.map((c) => `s.${c}`).join(', ')}, s.submitted_at) v
          where s.external_id is not null
          union all
          select '*', null where s.external_id is null
        ) f`;
  if (!grouped) {
    return `insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
      select s.organization_id, s.environment, s.survey_id, f.field, f.value, (s.submitted_at at time zone 'UTC')::date,
        array_append(s.cells, -1), array_fill(s.sign::bigint, array[cardinality(s.cells) + 1])
      from (${source}) s ${values}`;
  }
  return `insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
    select organization_id, environment, survey_id, field, value, day, array_agg(code order by code), array_agg(n order by code)
    from (
      select s.organization_id, s.environment, s.survey_id, f.field, f.value, (s.submitted_at at time zone 'UTC')::date as day, code, sum(s.sign)::bigint as n
      from (${source}) s
        ${values}
        cross join lateral unnest(array_append(s.cells, -1)) as code
      group by 1, 2, 3, 4, 5, 6, 7 having sum(s.sign) <> 0
    ) g
    group by 1, 2, 3, 4, 5, 6`;
}

/** Appends the daily counts' deltas of `source` (a CTE of copied or dropped rows). */
const dailyDeltas = (source: string, sign: 1 | -1) => `insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
        select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, ${sign < 0 ? '-' : ''}count(*)
        from ${source}, unnest(array_append(cells, -1)) as code
        group by 1, 2, 3, 4, 5`;

const copiedColumns = `organization_id, environment, survey_id, submitted_at, cells, ${subjectColumns.join(', ')}`;

/** Stores the typed copy of `added` with each response's subject, then its daily and segment deltas. */
const added = (grouped: boolean) => `
      with copied as (
        insert into analytics_responses
          (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells, ${subjectColumns.join(', ')})
        select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id, to_jsonb(r)->>'distribution_id',
               r.submitted_at, e.nums, e.cells, ${subjectValues}
        from added r
          join surveys s on s.organization_id = r.organization_id and s.environment = r.environment and s.id = r.survey_id
          cross join analytics_encode(r.answers, s.questions) e
          ${subjectOf('r')}
        returning ${copiedColumns}
      ), daily as (${dailyDeltas('copied', 1)})
      ${appendDeltas(`select ${copiedColumns}, 1 as sign from copied`, grouped)}`;

/** Deletes the typed copy of `removed`, with its daily and segment deltas, by the subject it was stored with. */
const removed = (grouped: boolean) => `
      with dropped as (
        delete from analytics_responses a using removed r
        where a.organization_id = r.organization_id and a.environment = r.environment
          and a.survey_id = r.survey_id and a.response_id = r.id
        returning ${copiedColumns.split(', ').map((c) => `a.${c}`).join(', ')}
      ), daily as (${dailyDeltas('dropped', -1)})
      ${appendDeltas(`select ${copiedColumns}, -1 as sign from dropped`, grouped)}`;

/**
 * An edited response (not an API operation; SQL or a later feature): its answers are encoded again, its
 * subject and submission time stay. The counts move by old cells out, new cells in, under the same subject.
 */
const replaced = `
      with old_copy as (
        select a.* from analytics_responses a join removed r
          on a.organization_id = r.organization_id and a.environment = r.environment and a.survey_id = r.survey_id and a.response_id = r.id
      ), recoded as (
        update analytics_responses a set nums = e.nums, cells = e.cells, submitted_at = n.submitted_at,
          respondent_external_id = n.respondent_external_id, distribution_id = to_jsonb(n)->>'distribution_id'
        from added n
          join surveys s on s.organization_id = n.organization_id and s.environment = n.environment and s.id = n.survey_id
          cross join analytics_encode(n.answers, s.questions) e
        where a.organization_id = n.organization_id and a.environment = n.environment and a.survey_id = n.survey_id and a.response_id = n.id
        returning ${copiedColumns.split(', ').map((c) => `a.${c}`).join(', ')}
      ), daily_out as (${dailyDeltas('old_copy', -1)}), daily_in as (${dailyDeltas('recoded', 1)})
      ${appendDeltas(`select ${copiedColumns}, -1 as sign from old_copy union all select ${copiedColumns}, 1 as sign from recoded`, true)}`;

/** As in 2026-11-25T0300: single rows keep PL/pgSQL's cached plans, batches are planned for their size. */
function bySize(table: string, single: string, multiple: string): string {
  return `if not exists (select 1 from ${table} offset 1) then
        ${single};
      else
        execute $q$${multiple}$q$;
      end if;`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ['analytics_respondents_insert', 'analytics_respondents_update', 'analytics_respondents_delete']) {
    await sql`drop trigger if exists ${sql.ref(trigger)} on respondents`.execute(db);
  }
  await sql`drop function if exists analytics_respondents_changed()`.execute(db);
  await sql.raw(`alter table analytics_responses ${subjectColumns.map((c) => `add column ${c} ${subjectTypes[c] ?? 'text'}`).join(', ')}`).execute(db);

  // Responses stored so far: their subject as the previous rule resolved it today (their answering distribution's
  // snapshot, else the current record), from which on it stays.
  await sql.raw(`
    update analytics_responses ar set (${subjectColumns.join(', ')}) = (
      select ${subjectValues} from (select ar.organization_id, ar.environment, ar.respondent_external_id, ar.distribution_id) r ${subjectOf('r')})`).execute(db);

  await sql.raw(`
    create or replace function analytics_responses_added() returns trigger language plpgsql as $$
    begin
      ${bySize('added', added(false), added(true))}
      return null;
    end $$`).execute(db);
  await sql.raw(`
    create or replace function analytics_responses_removed() returns trigger language plpgsql as $$
    begin
      ${bySize('removed', removed(false), removed(true))}
      return null;
    end $$`).execute(db);
  await sql.raw(`
    create function analytics_responses_replaced() returns trigger language plpgsql as $$
    begin
      ${replaced};
      return null;
    end $$`).execute(db);
  await sql`drop trigger if exists analytics_responses_update_a_remove on responses`.execute(db);
  await sql`drop trigger if exists analytics_responses_update_b_add on responses`.execute(db);
  await sql`create trigger analytics_responses_update after update on responses referencing old table as removed new table as added for each statement execute function analytics_responses_replaced()`.execute(db);
  // The distribution a respondent's API submission answers: their latest recipient row of the survey.
  await sql`create index if not exists distribution_recipients_by_survey_subject on distribution_recipients (organization_id, environment, survey_id, external_id, sent_at)`.execute(db);
}

/**
 * `down`'s response triggers: the copy without a subject, the deltas under the subject resolved at write time
 * (2026-11-25T0300's rule). The respondent triggers that moved counts are not rebuilt: run 0300's `down` and `up`
 * for them.
 */
const resolvedSource = (rows: string, sign: 1 | -1) =>
  `select x.organization_id, x.environment, x.survey_id, x.submitted_at, x.cells, ${sign} as sign, ${subjectColumns
    .map((c) => `case when dr.external_id is not null then dr.${c} else p.${c} end as ${c}`)
    .join(', ')} from ${rows} x ${subjectOf('x')}`;
const addedWithoutSubject = `
      with copied as (
        insert into analytics_responses
          (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells)
        select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id, to_jsonb(r)->>'distribution_id', r.submitted_at, e.nums, e.cells
        from added r join surveys s on s.id = r.survey_id, analytics_encode(r.answers, s.questions) e
        returning organization_id, environment, survey_id, respondent_external_id, distribution_id, submitted_at, cells
      ), daily as (${dailyDeltas('copied', 1)})
      ${appendDeltas(resolvedSource('copied', 1), true)}`;
const removedWithoutSubject = `
      with dropped as (
        delete from analytics_responses a using removed r
        where a.organization_id = r.organization_id and a.environment = r.environment and a.survey_id = r.survey_id and a.response_id = r.id
        returning a.organization_id, a.environment, a.survey_id, a.respondent_external_id, a.distribution_id, a.submitted_at, a.cells
      ), daily as (${dailyDeltas('dropped', -1)})
      ${appendDeltas(resolvedSource('dropped', -1), true)}`;

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists distribution_recipients_by_survey_subject`.execute(db);
  await sql`drop trigger if exists analytics_responses_update on responses`.execute(db);
  await sql`drop function if exists analytics_responses_replaced()`.execute(db);
  for (const [name, body] of [['analytics_responses_added', addedWithoutSubject], ['analytics_responses_removed', removedWithoutSubject]]) {
    await sql.raw(`
      create or replace function ${name}() returns trigger language plpgsql as $$
      begin
        ${body};
        return null;
      end $$`).execute(db);
  }
  await sql`create trigger analytics_responses_update_a_remove after update on responses referencing old table as removed for each statement execute function analytics_responses_removed()`.execute(db);
  await sql`create trigger analytics_responses_update_b_add after update on responses referencing new table as added for each statement execute function analytics_responses_added()`.execute(db);
  await sql.raw(`alter table analytics_responses ${subjectColumns.map((c) => `drop column ${c}`).join(', ')}`).execute(db);
}
