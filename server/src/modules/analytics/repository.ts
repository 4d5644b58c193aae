/**
 * All SQL of analytics. Every figure comes from aggregate queries over `analytics_responses` (the exact typed
 * copy of the responses, kept by triggers): the service receives histograms, group sizes and correlation
 * matrices — never responses.
 */
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/schema.js';
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
  /** A condition on the respondent row `p` (null when the response has no known respondent). */
  filter?: RawBuilder<unknown>;
  /** Count respondents as distinct ids (surveys that accept several responses per respondent). */
  distinctRespondents: boolean;
}

const tenureBands = sql<string | null>`case
  when p.hire_date is null then null
  when ar.submitted_at < p.hire_date + interval '1 year' then 'under_1_year'
  when ar.submitted_at < p.hire_date + interval '2 years' then '1_to_2_years'
  when ar.submitted_at < p.hire_date + interval '5 years' then '2_to_5_years'
  when ar.submitted_at < p.hire_date + interval '10 years' then '5_to_10_years'
  else '10_years_or_more' end`;

function segmentExpression(segment: SegmentField | undefined): RawBuilder<string | null> {
  if (!segment) return sql`null::text`;
  switch (segment.kind) {
    case 'column':
      return sql`p.${sql.ref(segment.column)}`;
    case 'tenure':
      return tenureBands;
    case 'attribute':
      return sql`left(p.attributes ->> ${segment.name}, 255)`;
  }
}

/** FROM … WHERE … of the responses in scope, with the respondent joined when a segment or filter needs it. */
function fromScope(scope: AnalyticsScope): RawBuilder<unknown> {
  const conditions: RawBuilder<unknown>[] = [
    sql`ar.organization_id = ${scope.tenant.organizationId}`,
    sql`ar.environment = ${scope.tenant.environment}`,
    sql`ar.survey_id = ${scope.surveyId}`,
  ];
  if (scope.submittedAfter) conditions.push(sql`ar.submitted_at >= ${scope.submittedAfter}`);
  if (scope.submittedBefore) conditions.push(sql`ar.submitted_at < ${scope.submittedBefore}`);
  if (scope.distributionId) conditions.push(sql`ar.distribution_id = ${scope.distributionId}`);
  if (scope.filter) conditions.push(sql`coalesce((${scope.filter}), false)`);
  const join =
    scope.segment || scope.filter
      ? sql`left join respondents p on p.organization_id = ar.organization_id and p.environment = ar.environment and p.external_id = ar.respondent_external_id`
      : sql``;
  return sql`from analytics_responses ar ${join} where ${sql.join(conditions, sql` and `)}`;
}

export interface GroupRow {
  /** Rows of the whole result have `whole` true; segment rows carry `segment`; day rows carry `day`. */
  kind: 'whole' | 'segment' | 'day';
  segment: string | null;
  day: string | null;
  responses: number;
  respondents: number;
}

/** Sizes of the whole result, of each segment, and responses per UTC day — one scan. */
export async function groupSizes(db: DbOrTx, scope: AnalyticsScope): Promise<GroupRow[]> {
  const respondents = scope.distinctRespondents ? sql`count(distinct who)::int` : sql`count(*)::int`;
  const { rows } = await sql<{ by_segment: number; by_day: number; segment: string | null; day: string | null; responses: number; respondents: number }>`
    select grouping(segment) as by_segment, grouping(day) as by_day, segment, day::text as day,
           count(*)::int as responses, ${respondents} as respondents
    from (
      select ${segmentExpression(scope.segment)} as segment, (ar.submitted_at at time zone 'UTC')::date as day,
             coalesce(ar.respondent_external_id, ar.response_id) as who
      ${fromScope(scope)}
    ) s
    group by grouping sets ((segment), (day), ())`.execute(db);
  return rows.map((row) => ({
    kind: row.by_segment === 1 && row.by_day === 1 ? 'whole' : row.by_day === 1 ? 'segment' : 'day',
    segment: row.segment,
    day: row.day,
    responses: row.responses,
    respondents: row.respondents,
  }));
}

export interface CellRow {
  /** `true` for the whole result's rows, else the row belongs to `segment`. */
  whole: boolean;
  segment: string | null;
  code: number;
  n: number;
}

/** Histogram of every question (see the cells encoding), for the whole result and, with a segment, per group. */
export async function cellCounts(db: DbOrTx, scope: AnalyticsScope): Promise<CellRow[]> {
  if (!scope.segment) {
    const { rows } = await sql<{ code: number; n: number }>`
      select code, count(*)::int as n from (select ar.cells ${fromScope(scope)}) s, unnest(s.cells) as code group by code`.execute(db);
    return rows.map((row) => ({ whole: true, segment: null, code: row.code, n: row.n }));
  }
  const { rows } = await sql<{ whole: number; segment: string | null; code: number; n: number }>`
    select grouping(segment) as whole, segment, code, count(*)::int as n
    from (select ${segmentExpression(scope.segment)} as segment, ar.cells ${fromScope(scope)}) s, unnest(s.cells) as code
    group by grouping sets ((segment, code), (code))`.execute(db);
  return rows.map((row) => ({ whole: row.whole === 1, segment: row.segment, code: row.code, n: row.n }));
}

export interface CorrelationInput {
  /** 1-based positions in `nums`: the outcome first, then the drivers. */
  positions: number[];
  /** Per position: answers above this value are favourable. */
  favourableAbove: number[];
}

export interface CorrelationRow {
  n: number;
  /** corr[i][j] for i ≠ j (null without variance); the diagonal is 1. */
  corr: (number | null)[][];
  means: number[];
  favourable: number[];
}

/** Pearson correlations of every pair, means and favourable counts over the complete responses — one scan. */
export async function correlations(db: DbOrTx, scope: AnalyticsScope, input: CorrelationInput): Promise<CorrelationRow> {
  const at = (position: number) => sql`ar.nums[${sql.lit(position)}]`;
  const { positions } = input;
  const selections: RawBuilder<unknown>[] = [sql`count(*)::int as n`];
  positions.forEach((a, i) => {
    selections.push(sql`avg(${at(a)})::float8 as ${sql.ref(`m_${i}`)}`);
    selections.push(sql`(count(*) filter (where ${at(a)} > ${sql.lit(input.favourableAbove[i]!)}))::int as ${sql.ref(`f_${i}`)}`);
    positions.forEach((b, j) => {
      if (j > i) selections.push(sql`corr(${at(a)}, ${at(b)}) as ${sql.ref(`c_${i}_${j}`)}`);
    });
  });
  const complete = sql.join(positions.map((position) => sql`${at(position)} is not null`), sql` and `);
  const { rows } = await sql<Record<string, number | null>>`
    select ${sql.join(selections)} ${fromScope(scope)} and ${complete}`.execute(db);
  const row = rows[0]!;
  const corr = positions.map((_, i) => positions.map((__, j) => (i === j ? 1 : (row[i < j ? `c_${i}_${j}` : `c_${j}_${i}`] ?? null))));
  return {
    n: row.n ?? 0,
    corr,
    means: positions.map((_, i) => row[`m_${i}`] ?? 0),
    favourable: positions.map((_, i) => row[`f_${i}`] ?? 0),
  };
}

export async function findThreshold(db: DbOrTx, tenant: Tenant): Promise<{ threshold: number; updatedAt: Date | null }> {
  const row = await db
    .selectFrom('analytics_settings')
    .select(['anonymity_threshold', 'updated_at'])
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .executeTakeFirst();
  return row ? { threshold: row.anonymity_threshold, updatedAt: row.updated_at } : { threshold: DEFAULT_ANONYMITY_THRESHOLD, updatedAt: null };
}

export async function saveThreshold(db: DbOrTx, tenant: Tenant, threshold: number): Promise<{ threshold: number; updatedAt: Date }> {
  const row = await db
    .insertInto('analytics_settings')
    .values({ organization_id: tenant.organizationId, environment: tenant.environment, anonymity_threshold: threshold, updated_at: new Date() })
    .onConflict((oc) => oc.columns(['organization_id', 'environment']).doUpdateSet({ anonymity_threshold: threshold, updated_at: new Date() }))
    .returning(['anonymity_threshold', 'updated_at'])
    .executeTakeFirstOrThrow();
  return { threshold: row.anonymity_threshold, updatedAt: row.updated_at };
}
