/**
 * All SQL of analytics. Every figure comes from aggregate queries over `analytics_responses` (the exact typed
 * copy of the responses, kept by triggers): the service receives histograms, group sizes and correlation
 * matrices — never responses.
 */
import { randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import { DEFAULT_ANONYMITY_THRESHOLD } from './suppression.js';

/** A respondent field to group by, already checked against the contract. */
export type SegmentField =
  | { kind: 'column'; column: 'department' | 'location' | 'job_title' | 'employment_type' | 'manager_id' }
  | { kind: 'tenure' }
  | { kind: 'attribute'; name: string };

export interface AnalyticsScope {
  tenant: Tenant;
  surveyId: string;
  submittedAfter?: Date;
  submittedBefore?: Date;
  distributionId?: string;
  segment?: SegmentField;
  /** A condition on the response's subject, the copy `ar` (compiled by the targeting module). */
  filter?: RawBuilder<unknown>;
  /** Count respondents as distinct ids (surveys that accept several responses per respondent). */
  distinctRespondents: boolean;
  /** The survey has distributions, so participation (recipients) applies. */
  snapshots: boolean;
}

/** Tenure bands in UTC, by the same SQL function the per-segment counts use (sql/10_analytics_tenure_band.sql). */
function tenureBands(alias: string, at: RawBuilder<unknown>) {
  return sql<string | null>`analytics_tenure_band(${sql.ref(`${alias}.hire_date`)}, ${at})`;
}

/** The group value of a respondent row `alias`; tenure is measured at `at` (submission or send). */
function segmentExpression(
  segment: SegmentField | undefined,
  alias: string,
  at: RawBuilder<unknown>,
): RawBuilder<string | null> {
  if (!segment) return sql<string | null>`null::text`;
  switch (segment.kind) {
    case 'column':
      return sql<string | null>`${sql.ref(`${alias}.${segment.column}`)}::text`;
    case 'tenure':
      return tenureBands(alias, at);
    case 'attribute':
      return sql<string | null>`left(${sql.ref(`${alias}.attributes`)} ->> cast(${segment.name} as text), 255)`;
  }
}

/** FROM … WHERE … of the responses in scope. */
function fromScope(scope: AnalyticsScope, joined: RawBuilder<unknown> = sql``): RawBuilder<unknown> {
  const conditions: RawBuilder<unknown>[] = [tenantIs(scope.tenant, 'ar'), sql`ar.survey_id = ${scope.surveyId}`];
  if (scope.submittedAfter) conditions.push(sql`ar.submitted_at >= ${scope.submittedAfter}`);
  if (scope.submittedBefore) conditions.push(sql`ar.submitted_at < ${scope.submittedBefore}`);
  if (scope.distributionId) conditions.push(sql`ar.distribution_id = ${scope.distributionId}`);
  // The copy holds each response's subject (the respondent as they were when asked) under the respondent
  // columns' names, so filters and segments read it in place. Responses without a subject never match a filter.
  if (scope.filter) conditions.push(sql`ar.external_id is not null and coalesce((${scope.filter}), false)`);
  return sql`from analytics_responses ar ${joined} where ${sql.join(conditions, sql` and `)}`;
}

const responseSegment = (scope: AnalyticsScope) => segmentExpression(scope.segment, 'ar', sql`ar.submitted_at`);

export interface GroupRow {
  /** The whole result's row (`whole`), else the row of `segment`. */
  whole: boolean;
  segment: string | null;
  respondents: number;
}

/**
 * Distinct respondents of the whole result and of each segment — only needed for surveys that accept several
 * responses per respondent (otherwise respondents = responses, which `cellCounts` already gives).
 */
export async function distinctRespondents(db: DbOrTx, scope: AnalyticsScope): Promise<GroupRow[]> {
  const { rows } = await sql<{ whole: number; segment: string | null; respondents: number }>`
    select grouping(segment) as whole, segment, count(distinct who)::int as respondents
    from (select ${responseSegment(scope)} as segment, coalesce(ar.respondent_external_id, ar.response_id) as who ${fromScope(scope)}) s
    group by grouping sets ((segment), ())`.execute(db);
  return rows.map((row) => ({ whole: row.whole === 1, segment: row.segment, respondents: row.respondents }));
}

export interface CellRow {
  /** `true` for the whole result's rows, else the row belongs to `segment`. */
  whole: boolean;
  segment: string | null;
  code: number;
  n: number;
}

/**
 * Everything static analytics needs, in one scan: the histogram of every question (the cells encoding), plus
 * one negative code per response for its UTC day (−1 − days since 1970-01-01), which gives the daily series and
 * the response counts. For the whole result and, with a segment, per group (GROUPING SETS).
 */
export async function cellCounts(
  db: DbOrTx,
  scope: AnalyticsScope,
  options: { whole: boolean } = { whole: true },
): Promise<CellRow[]> {
  const cells = sql`array_append(ar.cells, -1 - ((ar.submitted_at at time zone 'UTC')::date - date '1970-01-01'))`;
  if (!scope.segment) {
    const { rows } = await sql<{ code: number; n: number }>`
      select code, count(*)::int as n from (select ${cells} as cells ${fromScope(scope)}) s, unnest(s.cells) as code group by code`.execute(
      db,
    );
    return rows.map((row) => ({ whole: true, segment: null, code: row.code, n: row.n }));
  }
  const groups = options.whole ? sql`grouping sets ((segment, code), (code))` : sql`segment, code`;
  const { rows } = await sql<{ whole: number; segment: string | null; code: number; n: number }>`
    select grouping(segment) as whole, segment, code, count(*)::int as n
    from (select ${responseSegment(scope)} as segment, ${cells} as cells ${fromScope(scope)}) s, unnest(s.cells) as code
    group by ${groups}`.execute(db);
  return rows.map((row) => ({ whole: row.whole === 1, segment: row.segment, code: row.code, n: row.n }));
}

export interface NumberValuesRow {
  whole: boolean;
  segment: string | null;
  questionId: string;
  values: number[];
}

/**
 * The answers of `number` questions, per question, for the whole result and each segment: numbers are not
 * encoded in cells (any real number), so their figures come from the answers, read through the scope's copies
 * (the same rows, filters and segments as `cellCounts`) joined to their responses by key.
 */
export async function numberValues(
  db: DbOrTx,
  scope: AnalyticsScope,
  questionIds: readonly string[],
): Promise<NumberValuesRow[]> {
  return numberValuesBy(db, scope, questionIds, scope.segment ? responseSegment(scope) : sql`null::text`, sql``);
}

/** The answers of `number` questions in `manager`'s tree: the whole organization, and its parts as `treeCellCounts`. */
export async function treeNumberValues(
  db: DbOrTx,
  scope: AnalyticsScope,
  manager: string,
  questionIds: readonly string[],
): Promise<NumberValuesRow[]> {
  const part = treePart(manager);
  return numberValuesBy(
    db,
    scope,
    questionIds,
    sql`${part.kind} || ':' || coalesce(${part.value}, '')`,
    sql`and cast(${manager} as text) = any(ar.manager_chain)`,
  );
}

async function numberValuesBy(
  db: DbOrTx,
  scope: AnalyticsScope,
  questionIds: readonly string[],
  segment: RawBuilder<unknown>,
  narrowed: RawBuilder<unknown>,
): Promise<NumberValuesRow[]> {
  if (questionIds.length === 0) return [];
  const { rows } = await sql<{ whole: number; segment: string | null; question_id: string; values: number[] }>`
    select grouping(segment) as whole, segment, question_id, array_agg(value) as values
    from (
      select ${segment} as segment, a->>'questionId' as question_id, (a->>'value')::float8 as value
      ${fromScope(
        scope,
        sql`join responses r on r.organization_id = ar.organization_id and r.environment = ar.environment
              and r.id = ar.response_id
            cross join jsonb_array_elements(r.answers) a`,
      )}
        ${narrowed}
        and a->>'questionId' = any(${[...questionIds]}::text[]) and jsonb_typeof(a->'value') = 'number'
    ) s
    group by grouping sets ((segment, question_id), (question_id))`.execute(db);
  return rows.map((row) => ({
    whole: row.whole === 1,
    segment: row.segment,
    questionId: row.question_id,
    values: row.values.map(Number),
  }));
}

const isMidnightUtc = (date: Date | undefined) => date === undefined || date.getTime() % 86_400_000 === 0;

/** The daily pre-aggregation answers exactly when nothing narrows below whole UTC days of the whole survey. */
export const dailyCountsApply = (scope: AnalyticsScope) =>
  !scope.segment &&
  !scope.filter &&
  !scope.distributionId &&
  isMidnightUtc(scope.submittedAfter) &&
  isMidnightUtc(scope.submittedBefore);

/**
 * The same rows as `cellCounts` for the whole result, from the daily counts: the `#` rows of
 * `analytics_segment_cells`, one per response (or fold) and UTC day (see `dailyCountsApply`).
 */
export async function dailyCellCounts(db: DbOrTx, scope: AnalyticsScope): Promise<CellRow[]> {
  return countedCells(db, scope, sql`field = '#'`, true);
}

/**
 * `dailyCellCounts` of several whole surveys at once (no window), in one statement: the rows of each survey under
 * its id. Lists of surveys (trends) read one page of surveys in one round trip instead of one per survey.
 */
export async function dailyCellCountsOfSurveys(
  db: DbOrTx,
  tenant: Tenant,
  surveyIds: readonly string[],
): Promise<Map<string, CellRow[]>> {
  const bySurvey = new Map<string, CellRow[]>(surveyIds.map((id) => [id, []]));
  if (surveyIds.length === 0) return bySurvey;
  const { rows } = await sql<{ survey_id: string; code: number; n: number }>`
    select survey_id, case when u.code < 0 then -1 - (day - date '1970-01-01') else u.code end as code, sum(u.n)::bigint as n
    from analytics_segment_cells, unnest(codes, counts) as u(code, n)
    where ${tenantIs(tenant)} and survey_id = any(cast(${[...surveyIds]} as text[])) and field = '#'
    group by 1, 2 having sum(u.n) > 0`.execute(db);
  for (const row of rows)
    bySurvey.get(row.survey_id)?.push({ whole: true, segment: null, code: row.code, n: Number(row.n) });
  return bySurvey;
}

/** The field of `analytics_segment_cells` a segment is counted under, if it is one of them. */
function countedField(segment: SegmentField | undefined): string | undefined {
  // Not manager_id: a group per manager, as many rows as responses (see the migration).
  if (segment?.kind === 'column') return segment.column === 'manager_id' ? undefined : segment.column;
  if (segment?.kind === 'tenure') return 'tenure';
  return undefined;
}

/**
 * The per-segment counts answer exactly when the daily counts do and the segment is a respondent column other
 * than managerId, or tenure (not an attribute).
 */
export const segmentCountsApply = (scope: AnalyticsScope) =>
  countedField(scope.segment) !== undefined && dailyCountsApply({ ...scope, segment: undefined });

/** The group rows of `cellCounts` (not the whole), from `analytics_segment_cells` (see `segmentCountsApply`). */
export async function segmentCellCounts(db: DbOrTx, scope: AnalyticsScope): Promise<CellRow[]> {
  // `*`: responses without a respondent, null under every field (see the migration).
  return countedCells(db, scope, sql`field in (${countedField(scope.segment)}, '*')`, false);
}

/**
 * Sums the code arrays of the `analytics_segment_cells` rows under `fields` within the scope's whole UTC days:
 * per value (the segment; null under `#`, the whole) and code, with code −1 (responses) spread into one negative
 * code per day.
 */
async function countedCells(
  db: DbOrTx,
  scope: AnalyticsScope,
  fields: RawBuilder<unknown>,
  whole: boolean,
): Promise<CellRow[]> {
  const conditions: RawBuilder<unknown>[] = [tenantIs(scope.tenant), sql`survey_id = ${scope.surveyId}`, fields];
  if (scope.submittedAfter) conditions.push(sql`day >= ${scope.submittedAfter.toISOString().slice(0, 10)}::date`);
  if (scope.submittedBefore) conditions.push(sql`day < ${scope.submittedBefore.toISOString().slice(0, 10)}::date`);
  const { rows } = await sql<{ segment: string | null; code: number; n: number }>`
    select value as segment, case when u.code < 0 then -1 - (day - date '1970-01-01') else u.code end as code, sum(u.n)::bigint as n
    from analytics_segment_cells, unnest(codes, counts) as u(code, n)
    where ${sql.join(conditions, sql` and `)}
    group by 1, 2 having sum(u.n) > 0`.execute(db);
  return rows.map((row) => ({ whole, segment: row.segment, code: row.code, n: Number(row.n) }));
}

/**
 * One variable of a correlation matrix: `nums[num]` (1-based: a question's one number), or the one cell code a
 * response holds in [from, to), minus `from` (a matrix row's value, see `matrixRowCodes`); null when it holds none.
 */
export type CorrelationVariable = { num: number } | { cells: { from: number; to: number } };

/**
 * How each variable is read per response (`at(i)`): a number in place in `nums`; a matrix row from `cells`, all rows
 * in one pass per response (a lateral aggregate over its codes, `joined` after the copy), not one subquery per row
 * and use.
 */
function readersOf(variables: readonly CorrelationVariable[]) {
  const fromCells = variables.flatMap((variable, i) =>
    'cells' in variable
      ? [
          sql`min(c) filter (where c >= ${sql.lit(variable.cells.from)} and c < ${sql.lit(variable.cells.to)}) - ${sql.lit(variable.cells.from)} as ${sql.ref(`x_${i}`)}`,
        ]
      : [],
  );
  const at = (i: number) => {
    const variable = variables[i]!;
    return 'num' in variable ? sql`ar.nums[${sql.lit(variable.num)}]` : sql.ref(`m.x_${i}`);
  };
  const joined =
    fromCells.length === 0 ? sql`` : sql`cross join lateral (select ${sql.join(fromCells)} from unnest(ar.cells) c) m`;
  return { at, joined };
}

export interface CorrelationInput {
  /** The outcome first, then the drivers. */
  variables: CorrelationVariable[];
  /** Per variable: answers above this value are favourable. */
  favourableAbove: number[];
}

export interface CorrelationRow {
  n: number;
  /** corr[i][j] for i ≠ j (null without variance); the diagonal is 1. */
  corr: (number | null)[][];
  means: number[];
  favourable: number[];
}

/**
 * Pearson correlations of every pair, means and favourable counts over the complete responses (every variable
 * non-null) — one scan. A parallel plan still passes each aggregate as a column (PostgreSQL allows 1,664): 56
 * variables at most (see `MAXIMUM_DRIVERS`).
 */
export async function correlations(
  db: DbOrTx,
  scope: AnalyticsScope,
  input: CorrelationInput,
): Promise<CorrelationRow> {
  const { variables } = input;
  const { at, joined } = readersOf(variables);
  const pairs: RawBuilder<unknown>[] = [];
  variables.forEach((_, i) => {
    for (let j = i + 1; j < variables.length; j++) pairs.push(sql`corr(${at(i)}, ${at(j)})`);
  });
  const complete = sql.join(
    variables.map((_, i) => sql`${at(i)} is not null`),
    sql` and `,
  );
  const { rows } = await sql<{ n: number; means: (number | null)[]; favourable: number[]; pairs: (number | null)[] }>`
    select count(*)::int as n,
      array[${sql.join(variables.map((_, i) => sql`avg(${at(i)})::float8`))}] as means,
      array[${sql.join(
        variables.map((_, i) => sql`(count(*) filter (where ${at(i)} > ${sql.lit(input.favourableAbove[i]!)}))::int`),
      )}] as favourable,
      array[${sql.join(pairs)}]::float8[] as pairs
    ${fromScope(scope, joined)} and ${complete}`.execute(db);
  const row = rows[0]!;
  // pairs holds the upper triangle row by row: (0,1) … (0,p−1), (1,2) … .
  const p = variables.length;
  const pairAt = (i: number, j: number) => row.pairs[i * p - (i * (i + 1)) / 2 + (j - i - 1)] ?? null;
  const corr = variables.map((_, i) => variables.map((__, j) => (i === j ? 1 : i < j ? pairAt(i, j) : pairAt(j, i))));
  return {
    n: row.n ?? 0,
    corr,
    means: row.means.map((mean) => mean ?? 0),
    favourable: row.favourable,
  };
}

export interface ParticipationRow {
  whole: boolean;
  segment: string | null;
  invited: number;
  responded: number;
}

/**
 * Recipients the survey was sent to (status sent or responded; each respondent once, in the latest
 * distribution that reached them) and whether each has a response in scope, grouped by the segment of their
 * snapshot. `filter` is compiled over the snapshot alias `dr`.
 */
export async function participation(
  db: DbOrTx,
  scope: AnalyticsScope,
  recipientFilter?: RawBuilder<unknown>,
): Promise<ParticipationRow[]> {
  const responded = [
    sql`ar.organization_id = dr.organization_id`,
    sql`ar.environment = dr.environment`,
    sql`ar.survey_id = dr.survey_id`,
    sql`ar.respondent_external_id = dr.external_id`,
  ];
  if (scope.submittedAfter) responded.push(sql`ar.submitted_at >= ${scope.submittedAfter}`);
  if (scope.submittedBefore) responded.push(sql`ar.submitted_at < ${scope.submittedBefore}`);
  if (scope.distributionId) responded.push(sql`ar.distribution_id = ${scope.distributionId}`);
  const recipients = [
    tenantIs(scope.tenant, 'dr'),
    sql`dr.survey_id = ${scope.surveyId}`,
    sql`dr.status in ('sent', 'responded')`,
  ];
  if (scope.distributionId) recipients.push(sql`dr.distribution_id = ${scope.distributionId}`);
  if (recipientFilter) recipients.push(sql`coalesce((${recipientFilter}), false)`);
  const { rows } = await sql<{ whole: number; segment: string | null; invited: number; responded: number }>`
    select grouping(segment) as whole, segment, count(*)::int as invited, (count(*) filter (where responded))::int as responded
    from (
      select distinct on (dr.external_id)
        ${segmentExpression(scope.segment, 'dr', sql`coalesce(dr.sent_at, now())`)} as segment,
        exists (select 1 from analytics_responses ar where ${sql.join(responded, sql` and `)}) as responded
      from distribution_recipients dr
      where ${sql.join(recipients, sql` and `)}
      order by dr.external_id, dr.sent_at desc nulls last
    ) r
    group by grouping sets ((segment), ())`.execute(db);
  return rows.map((row) => ({
    whole: row.whole === 1,
    segment: row.segment,
    invited: row.invited,
    responded: row.responded,
  }));
}

/** Whether the survey has any distribution (then snapshots and recipients exist). */
export async function hasDistributions(db: DbOrTx, tenant: Tenant, surveyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('distributions')
    .select('id')
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Per other variable (a question's number, or a matrix row read from `cells` as in `correlations`): the responses
 * that answered both it and the outcome (at `nums[outcome]`), and their Pearson correlation.
 */
export async function outcomeCorrelations(
  db: DbOrTx,
  scope: AnalyticsScope,
  outcome: number,
  others: CorrelationVariable[],
): Promise<{ n: number; corr: number | null }[]> {
  if (others.length === 0) return [];
  const { at, joined } = readersOf(others);
  const outcomeValue = sql`ar.nums[${sql.lit(outcome)}]`;
  const selections = others.flatMap((_, i) => [
    sql`(count(*) filter (where ${at(i)} is not null))::int as ${sql.ref(`n_${i}`)}`,
    sql`corr(${outcomeValue}, ${at(i)}) as ${sql.ref(`c_${i}`)}`,
  ]);
  const { rows } = await sql<Record<string, number | null>>`
    select ${sql.join(selections)} ${fromScope(scope, joined)} and ${outcomeValue} is not null`.execute(db);
  const row = rows[0] ?? {};
  return others.map((_, i) => ({ n: row[`n_${i}`] ?? 0, corr: row[`c_${i}`] ?? null }));
}

/**
 * Folds the deltas of the per-segment and daily counts (`analytics_segment_cells`) into one row per key, its codes
 * summed (codes whose sum is zero go), in one statement: the deleted rows and their sum are one snapshot, so every
 * read sees the same totals before and after; rows appended meanwhile are not touched.
 */
export async function compactSegmentCounts(db: DbOrTx): Promise<number> {
  const { rows } = await sql<{ folded: number }>`
    with keys as (
      select organization_id, environment, survey_id, field, value, day from analytics_segment_cells
      group by 1, 2, 3, 4, 5, 6 having count(*) > 1
    ), gone as (
      delete from analytics_segment_cells c using keys k
      where c.organization_id = k.organization_id and c.environment = k.environment and c.survey_id = k.survey_id
        and c.field = k.field and c.value is not distinct from k.value and c.day = k.day
      returning c.organization_id, c.environment, c.survey_id, c.field, c.value, c.day, c.codes, c.counts
    ), summed as (
      select organization_id, environment, survey_id, field, value, day, u.code, sum(u.n) as n
      from gone, unnest(codes, counts) as u(code, n)
      group by 1, 2, 3, 4, 5, 6, 7 having sum(u.n) <> 0
    ), folded as (
      insert into analytics_segment_cells (organization_id, environment, survey_id, field, value, day, codes, counts)
      select organization_id, environment, survey_id, field, value, day, array_agg(code order by code), array_agg(n order by code)
      from summed group by 1, 2, 3, 4, 5, 6
      returning 1
    )
    select (select count(*) from gone)::int as folded`.execute(
    acrossTenants(db, "the analytics.compact job folds every tenant's per-segment counts"),
  );
  return rows[0]?.folded ?? 0;
}

export async function findThreshold(
  db: DbOrTx,
  tenant: Tenant,
): Promise<{ threshold: number; updatedAt: Date | null }> {
  const row = await db
    .selectFrom('analytics_settings')
    .select(['anonymity_threshold', 'updated_at'])
    .where(tenantIs(tenant))
    .executeTakeFirst();
  return row
    ? { threshold: row.anonymity_threshold, updatedAt: row.updated_at }
    : { threshold: DEFAULT_ANONYMITY_THRESHOLD, updatedAt: null };
}

export async function saveThreshold(
  db: DbOrTx,
  tenant: Tenant,
  threshold: number,
): Promise<{ threshold: number; updatedAt: Date }> {
  const row = await db
    .insertInto('analytics_settings')
    .values({
      ...tenantColumns(tenant),
      anonymity_threshold: threshold,
      updated_at: new Date(),
    })
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'environment'])
        .doUpdateSet({ anonymity_threshold: threshold, updated_at: new Date() }),
    )
    .returning(['anonymity_threshold', 'updated_at'])
    .executeTakeFirstOrThrow();
  return { threshold: row.anonymity_threshold, updatedAt: row.updated_at };
}

/**
 * A response's place in a manager's tree, from the chain of managers frozen with it (`manager_chain`, the subject's
 * manager first): `direct` when the manager is the first, `sub` under the direct report just below the manager in
 * the chain, `rest` outside the organization (the manager included: their own chain never holds them).
 */
function treePart(manager: string) {
  const at = sql`coalesce(array_position(ar.manager_chain, cast(${manager} as text)), 0)`;
  return {
    kind: sql<string>`case ${at} when 0 then 'rest' when 1 then 'direct' else 'sub' end`,
    value: sql<string | null>`case when ${at} > 1 then ar.manager_chain[${at} - 1] end`,
  };
}

export interface TreeSizeRow {
  /** `organization` and `rest` are the two halves of the whole; the others the organization's parts. */
  kind: 'organization' | 'rest' | 'direct' | 'sub';
  value: string | null;
  responses: number;
  respondents: number;
}

/** Responses and distinct respondents of each part of `manager`'s tree, of the organization and of the rest. */
export async function treeSizes(db: DbOrTx, scope: AnalyticsScope, manager: string): Promise<TreeSizeRow[]> {
  const part = treePart(manager);
  const { rows } = await sql<{
    kind: string | null;
    value: string | null;
    in_org: boolean | null;
    responses: number;
    respondents: number;
  }>`
    select kind, value, in_org, count(*)::int as responses, count(distinct who)::int as respondents
    from (
      select ${part.kind} as kind, ${part.value} as value,
        coalesce(cast(${manager} as text) = any(ar.manager_chain), false) as in_org,
        coalesce(ar.respondent_external_id, ar.response_id) as who
      ${fromScope(scope)}
    ) s
    group by grouping sets ((kind, value), (in_org))`.execute(db);
  return rows.map((row) => ({
    kind: (row.kind ?? (row.in_org ? 'organization' : 'rest')) as TreeSizeRow['kind'],
    value: row.value,
    responses: row.responses,
    respondents: row.respondents,
  }));
}

/**
 * The cells (as `cellCounts`) of `manager`'s organization: `whole` rows for the whole organization, the others
 * per part, `segment` being `direct:` or `sub:<direct report>`. Only responses inside the organization are read.
 */
export async function treeCellCounts(db: DbOrTx, scope: AnalyticsScope, manager: string): Promise<CellRow[]> {
  const part = treePart(manager);
  const cells = sql`array_append(ar.cells, -1 - ((ar.submitted_at at time zone 'UTC')::date - date '1970-01-01'))`;
  const { rows } = await sql<{ whole: number; segment: string | null; code: number; n: number }>`
    select grouping(segment) as whole, segment, code, count(*)::int as n
    from (
      select ${part.kind} || ':' || coalesce(${part.value}, '') as segment, ${cells} as cells
      ${fromScope(scope)} and cast(${manager} as text) = any(ar.manager_chain)
    ) s, unnest(s.cells) as code
    group by grouping sets ((segment, code), (code))`.execute(db);
  return rows.map((row) => ({ whole: row.whole === 1, segment: row.segment, code: row.code, n: row.n }));
}

/**
 * The responses each group of a result covers, for the release audit: the whole scope (key `whole`), and each
 * segment (`segment:<value>`, `segment:` + NUL for no value) or, with `manager`, each row of the manager's tree
 * (`organization`, `direct`, `sub:<direct report>`). With `members`, the response ids; always their fingerprint:
 * the count and the sum of a 64-bit hash of each id, the same for the same set whatever the query.
 */
export interface GroupSetRow {
  key: string;
  fingerprint: string;
  responses: number;
  members?: string[];
}

export async function groupSets(
  db: DbOrTx,
  scope: AnalyticsScope,
  options: { manager?: string; members: boolean },
): Promise<GroupSetRow[]> {
  const members = options.members ? sql`, array_agg(s.response_id) as members` : sql``;
  const fingerprint = sql`count(*) || ':' || sum(hashtextextended(s.response_id, 0))`;
  if (options.manager !== undefined) {
    const part = treePart(options.manager);
    const { rows } = await sql<{
      kind: string | null;
      value: string | null;
      in_org: boolean | null;
      fingerprint: string;
      responses: number;
      members?: string[];
    }>`
      select kind, value, in_org, ${fingerprint} as fingerprint, count(*)::int as responses ${members}
      from (
        select ${part.kind} as kind, ${part.value} as value,
          coalesce(cast(${options.manager} as text) = any(ar.manager_chain), false) as in_org, ar.response_id
        ${fromScope(scope)}
      ) s
      group by grouping sets ((kind, value), (in_org), ())`.execute(db);
    return rows.flatMap((row) => {
      const key =
        row.kind !== null
          ? row.kind === 'direct'
            ? 'direct'
            : row.kind === 'sub'
              ? `sub:${row.value ?? ''}`
              : undefined
          : row.in_org === null
            ? 'whole'
            : row.in_org
              ? 'organization'
              : undefined;
      return key === undefined
        ? []
        : [{ key, fingerprint: row.fingerprint, responses: row.responses, members: row.members }];
    });
  }
  const { rows } = await sql<{
    whole: number;
    segment: string | null;
    fingerprint: string;
    responses: number;
    members?: string[];
  }>`
    select ${scope.segment ? sql`grouping(segment)` : sql`1`} as whole, ${scope.segment ? sql`segment` : sql`null::text`} as segment,
      ${fingerprint} as fingerprint, count(*)::int as responses ${members}
    from (select ${responseSegment(scope)} as segment, ar.response_id ${fromScope(scope)}) s
    ${scope.segment ? sql`group by grouping sets ((segment), ())` : sql``}`.execute(db);
  return rows.map((row) => ({
    key: !scope.segment || row.whole === 1 ? 'whole' : segmentKey(row.segment),
    fingerprint: row.fingerprint,
    responses: row.responses,
    members: row.members,
  }));
}

/** The audit's key of a segment's group (`null`, no value, apart from every string). */
export const segmentKey = (value: string | null) => `segment:${value ?? '\u0000'}`;

/** Which of `fingerprints` were released for the survey. */
export async function releasedFingerprints(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  fingerprints: readonly string[],
): Promise<Set<string>> {
  const rows = await db
    .selectFrom('analytics_released_sets')
    .select('fingerprint')
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('fingerprint', 'in', [...fingerprints])
    .execute();
  return new Set(rows.map((row) => row.fingerprint));
}

/** The survey's audit state, its row locked until `tx` ends (created empty when there is none). */
export async function lockAuditState(tx: DbOrTx, tenant: Tenant, surveyId: string): Promise<string | null> {
  await tx
    .insertInto('analytics_release_audits')
    .values({ ...tenantColumns(tenant), survey_id: surveyId, state: '' })
    .onConflict((oc) => oc.columns(['organization_id', 'environment', 'survey_id']).doNothing())
    .execute();
  const row = await tx
    .selectFrom('analytics_release_audits')
    .select('state')
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return row.state === '' ? null : row.state;
}

/** Saves the state and the fingerprints of the groups just released. */
export async function saveAudit(
  tx: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  state: string,
  released: readonly string[],
): Promise<void> {
  await tx
    .updateTable('analytics_release_audits')
    .set({ state, updated_at: new Date() })
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .execute();
  if (released.length === 0) return;
  await tx
    .insertInto('analytics_released_sets')
    .values(released.map((fingerprint) => ({ ...tenantColumns(tenant), survey_id: surveyId, fingerprint })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Forgets who the subject of kept responses was (an erasure of their identity, a retention run anonymizing them):
 * the copy keeps the segment fields the figures are computed from (department, location, job title, employment
 * type, hire date, manager chain), so every figure stays as it was, and loses the respondent id, e-mail address,
 * names and custom attributes. `external_id` becomes '' rather than null: a non-null subject is what the count
 * triggers (and filters) read as "segmented", and the deltas a later deletion of the response subtracts must go
 * where its additions went. '' is no respondent's id (ids have at least one character).
 *
 * The respondent id becomes `key`, one random value per person (`~` and hex, no respondent's id): distinct
 * respondents are counted by it, so one person's several responses still count as one respondent and the anonymity
 * threshold decides as before; nothing links it to the person. Call it after the response itself forgot its
 * respondent (its update trigger copies the response's null). Returns how many copies changed.
 */
export async function forgetSubjects(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  subjects: readonly { responseId: string; key: string }[],
): Promise<number> {
  if (subjects.length === 0) return 0;
  const result = await sql`
    update analytics_responses a
    set respondent_external_id = s.key,
        external_id = case when a.external_id is null then null else '' end,
        email = null, first_name = null, last_name = null, attributes = null
    from unnest(${subjects.map((x) => x.responseId)}::text[], ${subjects.map((x) => x.key)}::text[])
      as s(response_id, key)
    where ${tenantIs(tenant, 'a')} and a.survey_id = ${surveyId} and a.response_id = s.response_id`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** A new key for one forgotten person's responses (see forgetSubjects). */
export const forgottenPersonKey = (): string => `~${randomBytes(12).toString('hex')}`;
