/** All SQL of the AI module. Every query is scoped by organization and environment (the table's key). */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { AiAnalysesTable, AnalysisErrorCode, AnalysisRequest, AnalysisResult, ProviderName } from './tables.js';

export type AnalysisRow = Selectable<AiAnalysesTable>;

/** An analysis covers at most this many responses, the newest. */
export const MAX_ANALYSED_RESPONSES = 100_000;

export function insertAnalysis(
  db: DbOrTx,
  tenant: Tenant,
  analysis: {
    id: string;
    surveyId: string;
    provider: ProviderName;
    model: string;
    request: AnalysisRequest;
    responseCount: number;
  },
): Promise<AnalysisRow> {
  return db
    .insertInto('ai_analyses')
    .values({
      ...tenantColumns(tenant),
      id: analysis.id,
      survey_id: analysis.surveyId,
      status: 'pending',
      provider: analysis.provider,
      model: analysis.model,
      request: JSON.stringify(analysis.request),
      response_count: analysis.responseCount,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findAnalysis(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  id: string,
): Promise<AnalysisRow | undefined> {
  return db
    .selectFrom('ai_analyses')
    .selectAll()
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findLatestAnalysis(db: DbOrTx, tenant: Tenant, surveyId: string): Promise<AnalysisRow | undefined> {
  return db
    .selectFrom('ai_analyses')
    .selectAll()
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function findAnalysisById(db: DbOrTx, tenant: Tenant, id: string): Promise<AnalysisRow | undefined> {
  return db.selectFrom('ai_analyses').selectAll().where(tenantIs(tenant)).where('id', '=', id).executeTakeFirst();
}

/** Counts a run and marks the analysis `processing`, with the provider that runs it. */
export function startRun(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  provider: ProviderName,
  model: string,
): Promise<AnalysisRow | undefined> {
  return db
    .updateTable('ai_analyses')
    .set({ status: 'processing', attempts: sql<number>`attempts + 1`, started_at: new Date(), provider, model })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

/**
 * The one transition to a final state: only an unfinished analysis moves, so a duplicate run (a resumed job
 * racing a late one) finishes nothing twice. Returns the row when this call finished it.
 */
export function finishAnalysis(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  outcome:
    | { status: 'completed'; result: AnalysisResult; responseCount: number }
    | { status: 'failed'; error: string; errorCode: AnalysisErrorCode },
): Promise<AnalysisRow | undefined> {
  const set =
    outcome.status === 'completed'
      ? {
          status: 'completed' as const,
          result: JSON.stringify(outcome.result),
          response_count: outcome.responseCount,
          error: null,
          error_code: null,
        }
      : { status: 'failed' as const, error: outcome.error.slice(0, 1000), error_code: outcome.errorCode };
  return db
    .updateTable('ai_analyses')
    .set({ ...set, completed_at: new Date() })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

/** The newest responses of a survey (id and answers), newest first. */
export function responsesToAnalyse(db: DbOrTx, tenant: Tenant, surveyId: string) {
  return db
    .selectFrom('responses')
    .select(['id', 'answers'])
    .where('survey_id', '=', surveyId)
    .where(tenantIs(tenant))
    .orderBy('submitted_at', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_ANALYSED_RESPONSES)
    .execute();
}
