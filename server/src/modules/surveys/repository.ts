/**
 * All SQL on `surveys`. Every query is scoped by organization and environment. State changes are single
 * conditional UPDATEs (`… WHERE status IN (…)`), so two concurrent launches cannot both succeed.
 */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/schema.js';
import type { Question, SurveySettings } from './questions.js';
import type { SurveysTable, SurveyStatus } from './tables.js';

export type SurveyRow = Selectable<SurveysTable>;

function scoped(db: DbOrTx, tenant: Tenant) {
  return db.selectFrom('surveys').where('organization_id', '=', tenant.organizationId).where('environment', '=', tenant.environment);
}

export function findSurvey(db: DbOrTx, tenant: Tenant, id: string, options: { forUpdate?: boolean } = {}): Promise<SurveyRow | undefined> {
  const query = scoped(db, tenant).selectAll().where('id', '=', id);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export interface NewSurvey {
  id: string;
  title: string;
  description: string | null;
  questions: Question[];
  settings: SurveySettings;
}

export function insertSurvey(db: DbOrTx, tenant: Tenant, survey: NewSurvey): Promise<SurveyRow> {
  const now = new Date();
  return db
    .insertInto('surveys')
    .values({
      id: survey.id,
      organization_id: tenant.organizationId,
      environment: tenant.environment,
      title: survey.title,
      description: survey.description,
      status: 'draft',
      questions: JSON.stringify(survey.questions),
      settings: JSON.stringify(survey.settings),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** `%`, `_` and `\` in a search are literal characters, not patterns. */
const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listSurveys(db: DbOrTx, tenant: Tenant, filter: { status?: SurveyStatus; search?: string; limit: number; offset: number }) {
  let query = scoped(db, tenant);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.search) query = query.where('title', 'ilike', `%${likeEscape(filter.search)}%`);
  // Page and total in one query (a window count); only a page past the end needs a second one for the total.
  const page = await query
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total_count'))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
  const rows: SurveyRow[] = page.map(({ total_count: _total, ...row }) => row);
  if (page.length > 0) return { rows, total: Number(page[0]!.total_count) };
  const total = await query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return { rows, total: total.count };
}

export interface SurveyChanges {
  title?: string;
  description?: string | null;
  questions?: Question[];
  settings?: SurveySettings;
}

export function updateSurvey(db: DbOrTx, tenant: Tenant, id: string, changes: SurveyChanges): Promise<SurveyRow | undefined> {
  return db
    .updateTable('surveys')
    .set({
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.questions !== undefined ? { questions: JSON.stringify(changes.questions) } : {}),
      ...(changes.settings !== undefined ? { settings: JSON.stringify(changes.settings) } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .returningAll()
    .executeTakeFirst();
}

export function deleteSurvey(db: DbOrTx, tenant: Tenant, id: string): Promise<{ id: string } | undefined> {
  return db
    .deleteFrom('surveys')
    .where('id', '=', id)
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .returning('id')
    .executeTakeFirst();
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
export function transitionSurvey(db: DbOrTx, tenant: Tenant, id: string, transition: Transition): Promise<SurveyRow | undefined> {
  const now = new Date();
  const set =
    transition === 'launch'
      ? { status: 'active' as const, launched_at: now, first_launched_at: sql<Date>`coalesce(first_launched_at, ${now})` }
      : transition === 'pause'
        ? { status: 'paused' as const, paused_at: now }
        : { status: 'closed' as const, closed_at: now };
  let query = db
    .updateTable('surveys')
    .set({ ...set, updated_at: now })
    .where('id', '=', id)
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('status', 'in', transitionSources[transition]);
  if (transition === 'launch') {
    query = query.where((eb) => eb.or([eb('status', '=', 'paused'), eb(sql<number>`jsonb_array_length(questions)`, '>', 0)]));
  }
  return query.returningAll().executeTakeFirst();
}

/** Keeps `response_count` in step with the rows; runs in the transaction that inserts or deletes one. */
export async function adjustResponseCount(db: DbOrTx, surveyId: string, delta: 1 | -1, options: { onlyIfActive?: boolean } = {}): Promise<boolean> {
  let query = db
    .updateTable('surveys')
    .set({ response_count: sql<number>`response_count + ${delta}` })
    .where('id', '=', surveyId);
  if (options.onlyIfActive) query = query.where('status', '=', 'active');
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
