/**
 * All SQL on `surveys`. Every query is scoped by organization and environment. State changes are single
 * conditional UPDATEs (`… WHERE status IN (…)`), so two concurrent launches cannot both succeed.
 */
import { sql, type Selectable } from 'kysely';
import { compiledOnce } from '../../db/compiled-once.js';
import type { Db, DbOrTx } from '../../db/database.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { Question, SurveySettings } from './questions.js';
import type { SurveysTable, SurveyStatus, SurveyVersionsTable } from './tables.js';

export type SurveyRow = Selectable<SurveysTable>;

/**
 * The row an UPDATE returned, with its exact response count read afterwards. Not in the UPDATE's RETURNING: when a
 * fold of the deltas commits while the UPDATE waits for the row, PostgreSQL updates the folded row version but the
 * RETURNING's sum of deltas still sees the deltas of the statement's snapshot, and counts them twice.
 */
async function withResponseCount(
  db: DbOrTx,
  tenant: Tenant,
  row: Omit<SurveyRow, 'response_count'> | undefined,
): Promise<SurveyRow | undefined> {
  if (!row) return undefined;
  const { response_count } = await db
    .selectFrom('surveys')
    .select(responseCount(tenant))
    .where(tenantIs(tenant))
    .where('surveys.id', '=', row.id)
    .executeTakeFirstOrThrow();
  return { ...row, response_count };
}

/**
 * A survey's columns, with `response_count` being the exact count: the folded column plus the deltas that
 * submissions and deletions append (no submission waits on the survey's row to count itself).
 */
const responseCount = (tenant: Tenant) =>
  sql<number>`(surveys.response_count + coalesce((
  select sum(c.n) from survey_response_counts c
  where ${tenantIs(tenant, 'c')} and c.survey_id = surveys.id
), 0))::int`.as('response_count');
// The deltas are matched to the tenant's value, not to the survey row's columns: a correlated tenant match is a
// join Citus cannot route to one shard, a constant one it can.
const surveyColumnsWithoutCount = [
  'surveys.id',
  'surveys.organization_id',
  'surveys.environment',
  'surveys.title',
  'surveys.description',
  'surveys.status',
  'surveys.questions',
  'surveys.settings',
  'surveys.created_at',
  'surveys.updated_at',
  'surveys.launched_at',
  'surveys.paused_at',
  'surveys.closed_at',
  'surveys.first_launched_at',
  'surveys.version',
  'surveys.languages',
] as const;
const surveyColumns = (tenant: Tenant) => [...surveyColumnsWithoutCount, responseCount(tenant)] as const;

export async function findSurvey(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SurveyRow | undefined> {
  if (options.forUpdate) {
    // The lock on its own, then the read: a FOR UPDATE beside the subquery that sums the response count cannot
    // be routed to one shard on Citus (it refuses it), while these two statements each are.
    const locked = await db
      .selectFrom('surveys')
      .select('id')
      .where(tenantIs(tenant))
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!locked) return undefined;
  }
  return db
    .selectFrom('surveys')
    .where(tenantIs(tenant))
    .select(surveyColumns(tenant))
    .where('id', '=', id)
    .executeTakeFirst();
}

export interface NewSurvey {
  id: string;
  title: string;
  description: string | null;
  questions: Question[];
  settings: SurveySettings;
  languages: string[];
}

export function insertSurvey(db: DbOrTx, tenant: Tenant, survey: NewSurvey): Promise<SurveyRow> {
  const now = new Date();
  return db
    .insertInto('surveys')
    .values({
      id: survey.id,
      ...tenantColumns(tenant),
      title: survey.title,
      description: survey.description,
      status: 'draft',
      questions: JSON.stringify(survey.questions),
      settings: JSON.stringify(survey.settings),
      languages: survey.languages,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** `%`, `_` and `\` in a search are literal characters, not patterns. */
const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A timestamp as the API writes it (`iso` in lib/time.ts): UTC, milliseconds, `Z`. */
const isoText = (column: string) =>
  sql<string | null>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One page of surveys, newest first, as the JSON text of the API's `Survey[]` (the members `toSurvey` gives, in its
 * order), built by PostgreSQL: the page travels as one text value and is sent as it is, instead of twenty rows
 * parsed, mapped and serialised again. Page and total in one query (a window count); only a page past the end needs
 * a second one for the total.
 */
export async function listSurveysJson(
  db: DbOrTx,
  tenant: Tenant,
  filter: { status?: SurveyStatus; search?: string; limit: number; offset: number },
): Promise<{ json: string; total: number }> {
  const values = {
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    status: filter.status,
    pattern: filter.search === undefined ? undefined : `%${likeEscape(filter.search)}%`,
    limit: filter.limit,
    offset: filter.offset,
  };
  const { items, total } = (await surveyPage(db, values))[0]!;
  if (total !== null) return { json: `[${items}]`, total: Number(total) };
  const count = await surveysMatching(db, tenant, values)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return { json: '[]', total: Number(count.count) };
}

interface PageValues {
  organizationId: string;
  environment: Tenant['environment'];
  status?: SurveyStatus;
  pattern?: string;
  limit: number;
  offset: number;
}

function surveysMatching(db: DbOrTx, tenant: Tenant, values: PageValues) {
  let query = db.selectFrom('surveys').where(tenantIs(tenant));
  if (values.status !== undefined) query = query.where('status', '=', values.status);
  if (values.pattern !== undefined) query = query.where('title', 'ilike', values.pattern);
  return query;
}

const surveyPage = compiledOnce((db: DbOrTx, values: PageValues) => {
  const tenant: Tenant = { organizationId: values.organizationId, environment: values.environment };
  const page = surveysMatching(db, tenant, values)
    .select(surveyColumns(tenant))
    .select(sql<number>`count(*) over ()`.as('total_count'))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(values.limit)
    .offset(values.offset);
  return sql<{ items: string; total: string | null }>`
    select coalesce(string_agg(row_to_json(survey)::text, ',' order by p.created_at desc, p.id desc), '') as items,
      max(p.total_count) as total
    from (${page}) p cross join lateral (
      select p.id, p.title, p.description, p.status, p.questions, p.settings, p.response_count as "responseCount",
        ${isoText('p.created_at')} as "createdAt", ${isoText('p.updated_at')} as "updatedAt",
        ${isoText('p.first_launched_at')} as "launchedAt", ${isoText('p.paused_at')} as "pausedAt",
        ${isoText('p.closed_at')} as "closedAt", p.version, to_jsonb(p.languages) as languages
    ) survey`.compile(db);
});

export interface SurveyChanges {
  title?: string;
  description?: string | null;
  questions?: Question[];
  settings?: SurveySettings;
  version?: number;
  languages?: string[];
}

/**
 * Keeps the survey's current title, description and questions as its version `version` (the first launch's 1,
 * or a change's next one), in the transaction that made it. A relaunch after a pause keeps version 1's row.
 */
export async function recordVersion(db: DbOrTx, tenant: Tenant, surveyId: string, version: number): Promise<void> {
  await db
    .insertInto('survey_versions')
    .columns([
      'organization_id',
      'environment',
      'survey_id',
      'version',
      'title',
      'description',
      'questions',
      'created_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('surveys')
        .select([
          'organization_id',
          'environment',
          'id',
          sql<number>`${version}::int`.as('version'),
          'title',
          'description',
          'questions',
          'updated_at',
        ])
        .where(tenantIs(tenant))
        .where('id', '=', surveyId),
    )
    .onConflict((oc) => oc.columns(['organization_id', 'environment', 'survey_id', 'version']).doNothing())
    .execute();
}

export type SurveyVersionRow = Selectable<SurveyVersionsTable>;

/** One survey's versions, in the tenant. */
const versionsOf = (db: DbOrTx, tenant: Tenant, surveyId: string) =>
  db.selectFrom('survey_versions').where(tenantIs(tenant)).where('survey_id', '=', surveyId);

export async function listVersions(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: SurveyVersionRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    versionsOf(db, tenant, surveyId).selectAll().orderBy('version').limit(page.limit).offset(page.offset).execute(),
    versionsOf(db, tenant, surveyId)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

export function findVersion(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  version: number,
): Promise<SurveyVersionRow | undefined> {
  return versionsOf(db, tenant, surveyId).selectAll().where('version', '=', version).executeTakeFirst();
}

export function updateSurvey(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  changes: SurveyChanges,
): Promise<SurveyRow | undefined> {
  return db
    .updateTable('surveys')
    .set({
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.questions !== undefined ? { questions: JSON.stringify(changes.questions) } : {}),
      ...(changes.settings !== undefined ? { settings: JSON.stringify(changes.settings) } : {}),
      ...(changes.version !== undefined ? { version: changes.version } : {}),
      ...(changes.languages !== undefined ? { languages: changes.languages } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where(tenantIs(tenant))
    .returning(surveyColumnsWithoutCount)
    .executeTakeFirst()
    .then((row) => withResponseCount(db, tenant, row));
}

export function deleteSurvey(db: DbOrTx, tenant: Tenant, id: string): Promise<{ id: string } | undefined> {
  return db.deleteFrom('surveys').where('id', '=', id).where(tenantIs(tenant)).returning('id').executeTakeFirst();
}

export type Transition = 'launch' | 'pause' | 'close';

/** Where each transition may start from. */
export const transitionSources: Record<Transition, readonly SurveyStatus[]> = {
  launch: ['draft', 'paused'],
  pause: ['active'],
  close: ['active', 'paused'],
};

/**
 * Applies a transition if, at this instant, the survey is in one of its source states (a draft also needs a
 * question to launch). Returns undefined when it was refused or the survey does not exist; the caller tells
 * the two apart.
 */
export async function transitionSurvey(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  transition: Transition,
): Promise<SurveyRow | undefined> {
  const now = new Date();
  const set =
    transition === 'launch'
      ? {
          status: 'active' as const,
          launched_at: now,
          first_launched_at: sql<Date>`coalesce(first_launched_at, ${now})`,
          version: sql<number>`coalesce(version, 1)`,
        }
      : transition === 'pause'
        ? { status: 'paused' as const, paused_at: now }
        : { status: 'closed' as const, closed_at: now };
  let query = db
    .updateTable('surveys')
    .set({ ...set, updated_at: now })
    .where('id', '=', id)
    .where(tenantIs(tenant))
    .where('status', 'in', transitionSources[transition]);
  if (transition === 'launch') {
    query = query.where((eb) =>
      eb.or([eb('status', '=', 'paused'), eb(sql<number>`jsonb_array_length(questions)`, '>', 0)]),
    );
  }
  return withResponseCount(db, tenant, await query.returning(surveyColumnsWithoutCount).executeTakeFirst());
}

/** Counts a response stored (+1) or responses deleted (−n), in the transaction that stores or deletes them. */
export async function countResponse(db: DbOrTx, tenant: Tenant, surveyId: string, delta: number): Promise<void> {
  await db
    .insertInto('survey_response_counts')
    .values({ ...tenantColumns(tenant), survey_id: surveyId, n: delta })
    .execute();
}

/**
 * Removes the rows that folds deleted from `survey_response_counts`, skipped when another sweep holds the table.
 * A survey's count walks every index entry of its deltas, dead ones included, until a vacuum removes them: while a
 * survey collected 2,000 responses a second, its reads walked tens of thousands of dead entries between two
 * autovacuum visits (one a minute) and a list of surveys slowed from about 3,300 to 600 requests/s. Swept after
 * each fold, the table keeps about one fold's worth of dead rows. Outside any transaction (VACUUM's rule).
 */
export async function sweepResponseCounts(db: Db): Promise<void> {
  await sql`vacuum (skip_locked) survey_response_counts`.execute(
    acrossTenants(db, 'a vacuum removes dead rows of every tenant; Citus sends it to every shard'),
  );
}

/**
 * Folds count deltas into `surveys.response_count` in one statement (the counts read are unchanged by it): all
 * of them (the `surveys.fold-counts` job), or one survey's.
 */
export async function foldResponseCounts(db: DbOrTx, only?: { tenant: Tenant; surveyId: string }): Promise<number> {
  const scope = only ? sql`where ${tenantIs(only.tenant)} and survey_id = ${only.surveyId}` : sql``;
  // The survey named again by value: Citus routes the update to one shard only when its own filter names the tenant.
  const target = only ? sql`and ${tenantIs(only.tenant, 's')} and s.id = ${only.surveyId}` : sql``;
  const { rows } = await sql<{ folded: string }>`
    with moved as (
      delete from survey_response_counts ${scope} returning organization_id, environment, survey_id, n
    ), sums as (
      select organization_id, environment, survey_id, sum(n)::int as n, count(*) as deltas from moved group by 1, 2, 3
    ), folded as (
      update surveys s set response_count = s.response_count + sums.n
      from sums
      where s.organization_id = sums.organization_id and s.environment = sums.environment and s.id = sums.survey_id
        ${target}
    )
    select coalesce(sum(deltas), 0) as folded from sums`.execute(
    only ? db : acrossTenants(db, "the surveys.fold-counts job folds every tenant's deltas"),
  );
  return Number(rows[0]?.folded ?? 0);
}

/** What analytics read of a survey that took part in a cycle: its words, questions, settings and dates. */
export type CycleSurveyRow = Pick<
  SurveyRow,
  'id' | 'title' | 'status' | 'questions' | 'settings' | 'first_launched_at' | 'closed_at'
>;

const cycleColumns = ['id', 'title', 'status', 'questions', 'settings', 'first_launched_at', 'closed_at'] as const;

/** Whether one of the survey's questions carries one of `keys` (jsonb containment per key, no unnesting). */
const hasQuestionKey = (keys: readonly string[]) =>
  sql<boolean>`(${sql.join(
    keys.map((key) => sql`surveys.questions @> cast(${JSON.stringify([{ key }])} as jsonb)`),
    sql` or `,
  )})`;

/**
 * One page of the tenant's launched surveys with a question whose key is `key`, oldest first launch first (then
 * by id, so that equal instants page stably), with their number; `launchedFrom`/`launchedBefore` bound the first
 * launch (from inclusive, before exclusive).
 */
export async function listLaunchedSurveysWithKey(
  db: DbOrTx,
  tenant: Tenant,
  key: string,
  filter: { launchedFrom?: Date; launchedBefore?: Date; limit: number; offset: number },
): Promise<{ rows: CycleSurveyRow[]; total: number }> {
  let query = db
    .selectFrom('surveys')
    .where(tenantIs(tenant))
    .where('first_launched_at', 'is not', null)
    .where(hasQuestionKey([key]));
  if (filter.launchedFrom) query = query.where('first_launched_at', '>=', filter.launchedFrom);
  if (filter.launchedBefore) query = query.where('first_launched_at', '<', filter.launchedBefore);
  const rows = await query
    .select([...cycleColumns, sql<string>`count(*) over ()`.as('total')])
    .orderBy('first_launched_at')
    .orderBy('id')
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
  if (rows.length > 0 || filter.offset === 0) {
    return { rows: rows.map(({ total: _, ...row }) => row), total: Number(rows[0]?.total ?? 0) };
  }
  // A page past the end carries no window count.
  const count = await query.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  return { rows: [], total: Number(count.count) };
}

/**
 * The previous cycle of a survey: the tenant's survey first launched most recently before it (by first launch,
 * then id) that has a question carrying one of `keys`; `launchedAt` is the survey's first launch, or now for one
 * never launched.
 */
export function findPreviousCycle(
  db: DbOrTx,
  tenant: Tenant,
  survey: { id: string; launchedAt: Date },
  keys: readonly string[],
): Promise<CycleSurveyRow | undefined> {
  return db
    .selectFrom('surveys')
    .select(cycleColumns)
    .where(tenantIs(tenant))
    .where('first_launched_at', 'is not', null)
    .where(
      sql<boolean>`(first_launched_at, id) < (cast(${survey.launchedAt} as timestamptz), cast(${survey.id} as text))`,
    )
    .where(hasQuestionKey(keys))
    .orderBy('first_launched_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The tenant's surveys with when each closed (null: not closed), for retention rules counted from the close. */
export function surveyClosings(db: DbOrTx, tenant: Tenant): Promise<{ id: string; closed_at: Date | null }[]> {
  return db.selectFrom('surveys').select(['id', 'closed_at']).where(tenantIs(tenant)).orderBy('id').execute();
}
