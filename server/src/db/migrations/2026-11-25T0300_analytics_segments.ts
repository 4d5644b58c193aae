/**
 * Exact per-segment analytics counts (speed of breakdowns). Frozen: later changes go into new files.
 *
 * `analytics_segment_cells`: for each survey, respondent field, field value and UTC day, how many responses carry
 * each cell code (the encoding of 2026-11-24T0600_analytics; code −1: the responses themselves). Fields: the
 * respondent columns `department`, `location`, `job_title`, `employment_type`, and `tenure` (the band of
 * `hire_date` at submission, `analytics_tenure_band`); `*` holds the responses without a respondent. Not
 * `manager_id`: one group per manager, so its counts would hold about one row per response and save nothing
 * over the scan (nor custom attributes: unbounded names). A response's value is its respondent's as the
 * distribution's snapshot holds it when the response came through a distribution that snapshotted the
 * respondent, else the current respondent record, else null: the rule the scan applies.
 *
 * Rows are append-only deltas (`codes[i]` occurs `counts[i]` more or fewer times), summed on read, so no two
 * transactions ever wait on one counter row; the analytics.compact job folds each key's rows into one.
 *
 * Kept exact in the same transaction as every change that moves a response between values:
 * - responses stored or deleted (the triggers of 2026-11-24T0600, replaced here): +1 / −1 under the values the
 *   response resolves to now;
 * - respondent records created, changed (in a segment field) or deleted (triggers on `respondents`): each
 *   response of theirs that no snapshot covers moves from the old values to the new ones.
 * A snapshot (`distribution_recipients`) is written once when its distribution is sent, before any response can
 * name it (a response through a distribution names a recipient only by that recipient's personal token), and is
 * never changed or deleted except with its organization, so it needs no trigger.
 *
 * Races: a response stored while its respondent changes must not be counted under a value the change has
 * already moved from. Statements that store or delete responses take a shared transaction-level advisory lock
 * per organization and environment before they read respondent values; statements that change respondent
 * values take it exclusively before they read the responses to move. In READ COMMITTED each statement of the
 * trigger functions takes a fresh snapshot, so whichever side waits sees the other's committed rows. One lock
 * per tenant (not per respondent): a sync batch of 100,000 records takes one lock, and the exclusive holders
 * never deadlock with each other; submissions wait only while a respondent change of their tenant commits.
 */
import { sql, type Kysely } from 'kysely';

/** The lock class of `pg_advisory_xact_lock(int, int)`; the second key is the tenant. */
const LOCK_CLASS = 0x5e9_5e9;
const tenantKey = (alias: string) => `hashtext(${alias}.organization_id || '/' || ${alias}.environment)`;
const fields = ['department', 'location', 'job_title', 'employment_type', 'hire_date'];

/** Takes the tenant lock of every tenant in `source` (a query with organization_id and environment), in order. */
function lockTenants(source: string, mode: 'shared' | 'exclusive'): string {
  const lock = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  return `select ${lock}(${LOCK_CLASS}, t.k) from (select distinct ${tenantKey('s')} as k from (${source}) s order by 1) t`;
}

/**
 * The PL/pgSQL that runs `queries` in a statement-level trigger whose transition table is `table`: as statements
 * of the function when it holds one row, through EXECUTE when it holds more. PL/pgSQL plans a statement once per
 * connection, for the size its transition tables had then, and keeps that plan: one made for a single row joins
 * two 1,000-row tables by a nested loop (a million comparisons: 280 ms where 20 suffice), one made for 100,000
 * rows may scan a whole table for each later single row. EXECUTE plans every batch for its own size (about a
 * millisecond, nothing beside a batch's work); single rows, the common case, keep their cached plans.
 */
function bySize(table: string, single: string[], multiple = single): string {
  // A SELECT whose rows are not wanted is written PERFORM in a PL/pgSQL statement.
  const statement = (query: string) => (query.startsWith('select ') ? `perform ${query.slice('select '.length)};` : `${query};`);
  return `if not exists (select 1 from ${table} offset 1) then
        ${single.map(statement).join('\n        ')}
      else
        ${multiple.map((query) => `execute $q$${query}$q$;`).join('\n        ')}
      end if;`;
}

/** The respondent columns a response resolves to: the snapshot `dr` when there is one, else the record `p`. */
const resolvedColumns = fields.map((c) => `case when dr.external_id is not null then dr.${c} else p.${c} end as ${c}`).join(', ');
const resolveJoins = (alias: string) => `
  left join distribution_recipients dr on dr.organization_id = ${alias}.organization_id and dr.environment = ${alias}.environment
    and dr.distribution_id = ${alias}.distribution_id and dr.external_id = ${alias}.respondent_external_id
  left join respondents p on p.organization_id = ${alias}.organization_id and p.environment = ${alias}.environment
    and p.external_id = ${alias}.respondent_external_id`;

/** Stores the typed copy of the responses in the transition table `added` (the encoding of 2026-11-24T0600). */
const copyAdded = (returning: string) => `insert into analytics_responses
          (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells)
        select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id, to_jsonb(r)->>'distribution_id',
               r.submitted_at, e.nums, e.cells
        from added r join surveys s on s.id = r.survey_id, analytics_encode(r.answers, s.questions) e
        returning ${returning}`;

/** Deletes the typed copy of the responses in the transition table `removed`. */
const dropRemoved = (returning: string) => `delete from analytics_responses a using removed r
        where a.organization_id = r.organization_id and a.environment = r.environment
          and a.survey_id = r.survey_id and a.response_id = r.id
        returning ${returning}`;

/** Appends the daily counts' deltas of the responses in `source` (a CTE of copied or dropped rows). */
const dailyDeltas = (source: string, sign: 1 | -1) => `insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
        select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, ${sign < 0 ? '-' : ''}count(*)
        from ${source}, unnest(array_append(cells, -1)) as code
        group by 1, 2, 3, 4, 5`;

/**
 * Appends the deltas of `source`: rows of organization_id, environment, survey_id, respondent_external_id,
 * submitted_at, cells, sign (+1/−1) and the respondent columns. Grouped: one row per key and statement, and
 * contributions that cancel out are dropped (bulk writes, moves). Ungrouped: one row per response and field, its
 * cells as they are (a response's codes are distinct) — for a single response that skips two sorts and
 * aggregations, which cost a submission more than the rows themselves (the analytics-writes bench). A response
 * without a respondent is null under every field for good: it is counted once, under field `*`, which readers add
 * to the null group of whichever field they read (a submission without a respondent appends one row, not five).
 * `onlyFields`: a text[] column of `source` naming the fields to append (the others did not change).
 */
function appendDeltas(source: string, grouped = true, onlyFields?: string): string {
  const values = `cross join lateral (
          select v.field, v.value from analytics_segment_values(${fields.map((c) => `s.${c}`).join(', ')}, s.submitted_at) v
          where s.respondent_external_id is not null${onlyFields ? ` and v.field = any(s.${onlyFields})` : ''}
          union all
          select '*', null where s.respondent_external_id is null
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

/** The functions and triggers; `up` runs this, and the backfill after it. */
async function createFunctions(db: Kysely<unknown>): Promise<void> {
  // Compared in UTC, so that the band never depends on a session's TimeZone (the scan uses the same function).
  await sql.raw(`
    create function analytics_tenure_band(hire_date date, at timestamptz) returns text
    language sql immutable parallel safe as $$
      select case
        when hire_date is null then null
        when (at at time zone 'UTC') < hire_date + interval '1 year' then 'under_1_year'
        when (at at time zone 'UTC') < hire_date + interval '2 years' then '1_to_2_years'
        when (at at time zone 'UTC') < hire_date + interval '5 years' then '2_to_5_years'
        when (at at time zone 'UTC') < hire_date + interval '10 years' then '5_to_10_years'
        else '10_years_or_more' end
    $$`).execute(db);
  await sql.raw(`
    create function analytics_segment_values(department text, location text, job_title text, employment_type text,
      hire_date date, at timestamptz, out field text, out value text)
    returns setof record language sql immutable parallel safe as $$
      values ('department', department), ('location', location), ('job_title', job_title),
        ('employment_type', employment_type), ('tenure', analytics_tenure_band(hire_date, at))
    $$`).execute(db);

  const added = (grouped: boolean) => `
      with copied as (${copyAdded('organization_id, environment, survey_id, respondent_external_id, distribution_id, submitted_at, cells')}),
      daily as (${dailyDeltas('copied', 1)})
      ${appendDeltas(`select c.organization_id, c.environment, c.survey_id, c.respondent_external_id, c.submitted_at, c.cells, 1 as sign, ${resolvedColumns} from copied c ${resolveJoins('c')}`, grouped)}`;
  const removed = (grouped: boolean) => `
      with dropped as (${dropRemoved('a.organization_id, a.environment, a.survey_id, a.respondent_external_id, a.distribution_id, a.submitted_at, a.cells')}),
      daily as (${dailyDeltas('dropped', -1)})
      ${appendDeltas(`select d.organization_id, d.environment, d.survey_id, d.respondent_external_id, d.submitted_at, d.cells, -1 as sign, ${resolvedColumns} from dropped d ${resolveJoins('d')}`, grouped)}`;
  // One response (a submission, a deletion through the API): ungrouped; more (imports, bulk deletes): grouped.
  for (const [name, table, deltas] of [['analytics_responses_added', 'added', added], ['analytics_responses_removed', 'removed', removed]] as const) {
    const lock = lockTenants(`select organization_id, environment from ${table}`, 'shared');
    await sql.raw(`
      create or replace function ${name}() returns trigger language plpgsql as $$
      begin
        ${bySize(table, [lock, deltas(false)], [lock, deltas(true)])}
        return null;
      end $$`).execute(db);
  }

  // A respondent record changed: `before` and `after` hold its segment columns (null when there is no record), and
  // `fields_changed` the segment fields whose value differs: only those move (one field, not five, when a sync
  // changes a department; none of a new record's empty fields).
  const nulls = fields.map((c) => `null::${c === 'hire_date' ? 'date' : 'text'} as ${c}`).join(', ');
  const segmentOf = (column: string) => (column === 'hire_date' ? 'tenure' : column);
  const fieldsWhere = (test: (column: string) => string) => `array_remove(array[${fields.map((c) => `case when ${test(c)} then '${segmentOf(c)}' end`).join(', ')}], null)`;
  const moved = (changed: string, before: string, after: string) => `
    with changed as (${changed})
    ${appendDeltas(
      `
      select ar.organization_id, ar.environment, ar.survey_id, ar.respondent_external_id, ar.submitted_at, ar.cells, m.sign, m.fields_changed, ${fields.map((c) => `m.${c}`).join(', ')}
      from (select organization_id, environment, external_id, fields_changed, -1 as sign, ${before} from changed
            union all
            select organization_id, environment, external_id, fields_changed, 1 as sign, ${after} from changed) m
      join analytics_responses ar on ar.organization_id = m.organization_id and ar.environment = m.environment
        and ar.respondent_external_id = m.external_id
      where not exists (select 1 from distribution_recipients dr where dr.organization_id = ar.organization_id
        and dr.environment = ar.environment and dr.distribution_id = ar.distribution_id and dr.external_id = ar.respondent_external_id)`,
      true,
      'fields_changed',
    )}`;
  const changedRows = `select n.organization_id, n.environment, n.external_id, ${fields.map((c) => `o.${c} as old_${c}, n.${c} as new_${c}`).join(', ')},
      ${fieldsWhere((c) => `o.${c} is distinct from n.${c}`)} as fields_changed
    from old_rows o join new_rows n on n.organization_id = o.organization_id and n.environment = o.environment and n.external_id = o.external_id
    where (${fields.map((c) => `o.${c}`).join(', ')}) is distinct from (${fields.map((c) => `n.${c}`).join(', ')})`;
  const withValues = (table: string) => `select *, ${fieldsWhere((c) => `${c} is not null`)} as fields_changed from ${table}`;
  await sql.raw(`
    create function analytics_respondents_changed() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        ${bySize('new_rows', [lockTenants('select organization_id, environment from new_rows', 'exclusive'), moved(withValues('new_rows'), nulls, fields.join(', '))])}
      elsif tg_op = 'DELETE' then
        ${bySize('old_rows', [lockTenants('select organization_id, environment from old_rows', 'exclusive'), moved(withValues('old_rows'), fields.join(', '), nulls)])}
      else
        ${bySize('new_rows', [lockTenants(changedRows, 'exclusive'), moved(changedRows, fields.map((c) => `old_${c} as ${c}`).join(', '), fields.map((c) => `new_${c} as ${c}`).join(', '))])}
      end if;
      return null;
    end $$`).execute(db);
  await sql`create trigger analytics_respondents_insert after insert on respondents referencing new table as new_rows for each statement execute function analytics_respondents_changed()`.execute(db);
  await sql`create trigger analytics_respondents_update after update on respondents referencing old table as old_rows new table as new_rows for each statement execute function analytics_respondents_changed()`.execute(db);
  await sql`create trigger analytics_respondents_delete after delete on respondents referencing old table as old_rows for each statement execute function analytics_respondents_changed()`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('analytics_segment_cells')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('codes', sql`integer[]`, (c) => c.notNull())
    .addColumn('counts', sql`bigint[]`, (c) => c.notNull())
    .execute();
  await sql`create index analytics_segment_cells_by_key on analytics_segment_cells (organization_id, environment, survey_id, field, day, value)`.execute(db);
  // A respondent's responses across surveys, for moving them when the record changes.
  await sql`create index analytics_responses_by_subject on analytics_responses (organization_id, environment, respondent_external_id) where respondent_external_id is not null`.execute(db);

  await createFunctions(db);

  // Responses stored before this migration, resolved as the triggers resolve them.
  await sql.raw(
    appendDeltas(`select ar.organization_id, ar.environment, ar.survey_id, ar.respondent_external_id, ar.submitted_at, ar.cells, 1 as sign, ${resolvedColumns} from analytics_responses ar ${resolveJoins('ar')}`),
  ).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ['analytics_respondents_insert', 'analytics_respondents_update', 'analytics_respondents_delete']) {
    await sql`drop trigger if exists ${sql.ref(trigger)} on respondents`.execute(db);
  }
  await sql`drop function if exists analytics_respondents_changed()`.execute(db);
  // The response triggers go back to their versions of 2026-11-24T0600 (without the segment deltas).
  const restored = [
    ['analytics_responses_added', `with copied as (${copyAdded('organization_id, environment, survey_id, submitted_at, cells')}) ${dailyDeltas('copied', 1)}`],
    ['analytics_responses_removed', `with dropped as (${dropRemoved('a.organization_id, a.environment, a.survey_id, a.submitted_at, a.cells')}) ${dailyDeltas('dropped', -1)}`],
  ];
  for (const [name, body] of restored) {
    await sql.raw(`
      create or replace function ${name}() returns trigger language plpgsql as $$
      begin
        ${body};
        return null;
      end $$`).execute(db);
  }
  await sql`drop function if exists analytics_segment_values(text, text, text, text, date, timestamptz)`.execute(db);
  await sql`drop function if exists analytics_tenure_band(date, timestamptz)`.execute(db);
  await sql`drop index if exists analytics_responses_by_subject`.execute(db);
  await db.schema.dropTable('analytics_segment_cells').ifExists().execute();
}
