/**
 * The rules of the AI operations: which provider runs, survey generation (checked exactly like `createSurvey`,
 * then stored through it), accepting analyses (row + queue entry in one transaction) and the mapping of rows to
 * the contract's `AiAnalysis`.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Survey, SurveyGenerateRequest } from '../../generated/openapi.js';
import type { AiConfig } from '../../config.js';
import type { Tenant } from '../../db/tenant.js';
import { ApiError, contractPath, notFound, validationFailed } from '../../http/index.js';
import type { Dependencies } from '../../dependencies.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { findThreshold } from '../analytics/index.js';
import { normaliseQuestions } from '../surveys/index.js';
import * as surveys from '../surveys/index.js';
import { OfflineProvider } from './offline.js';
import { countInPrompt } from './offline-generate.js';
import type { DraftAdjustment, DraftProblem } from './draft-fixes.js';
import { ProviderError, type AiProvider, type GeneratedDraft, type SurveyDraft } from './provider.js';
import { analysisQueue, type AnalysisJobData } from './queue.js';
import { OpenAiCompatibleProvider } from './remote.js';
import { findAnalysis, findLatestAnalysis, insertAnalysis, type AnalysisRow } from './repository.js';
import type { AiAnalysis, AnalysisRequest } from './tables.js';

/** The contract's default `questionCount`: a count stated in the prompt wins over it. */
const DEFAULT_QUESTION_COUNT = 8;

const providers = new WeakMap<AiConfig, AiProvider>();
export function providerFor(config: AiConfig): AiProvider {
  let provider = providers.get(config);
  if (!provider) {
    provider = config.provider === 'openai-compatible' ? new OpenAiCompatibleProvider(config) : new OfflineProvider();
    providers.set(config, provider);
  }
  return provider;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
let surveyCreateValidator: ValidateFunction | undefined;
/** `SurveyCreate` from the bundled contract: the schema the validator applies to createSurvey's body. */
function validateSurveyCreate(): ValidateFunction {
  if (!surveyCreateValidator) {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    ajv.addSchema(JSON.parse(readFileSync(contractPath, 'utf8')) as object, 'openapi.json');
    surveyCreateValidator = ajv.compile({ $ref: 'openapi.json#/components/schemas/SurveyCreate' });
  }
  return surveyCreateValidator;
}

/**
 * Every problem createSurvey would find in a draft, at JSON pointers into it: the contract's schema, then the surveys
 * module's rules (ids, keys, display logic).
 */
export function draftProblems(draft: SurveyDraft): DraftProblem[] {
  const validate = validateSurveyCreate();
  if (!validate(draft))
    return (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'is invalid' }));
  return normaliseQuestions(draft.questions ?? [], '/questions').problems.map((p) => ({
    path: p.path ?? '/',
    message: p.message,
  }));
}

function apiErrorOf(error: ProviderError): ApiError {
  switch (error.code) {
    case 'ai_provider_timeout':
      return new ApiError(504, 'ai_provider_timeout', error.message);
    case 'ai_output_invalid':
      return new ApiError(502, 'ai_output_invalid', error.message);
    default: {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 5000) / 1000));
      return new ApiError(503, 'ai_provider_unavailable', error.message, undefined, { 'Retry-After': String(seconds) });
    }
  }
}

export async function generateSurvey(
  deps: Pick<Dependencies, 'db' | 'config' | 'log'>,
  tenant: Tenant,
  body: SurveyGenerateRequest,
): Promise<{ survey: Survey; adjustments: DraftAdjustment[]; provider: AiProvider['name']; model: string }> {
  const provider = providerFor(deps.config.ai);
  const asked = body.questionCount ?? DEFAULT_QUESTION_COUNT;
  const questionCount = asked === DEFAULT_QUESTION_COUNT ? (countInPrompt(body.prompt) ?? asked) : asked;
  let generated: GeneratedDraft;
  try {
    generated = await provider.generateSurvey(
      { prompt: body.prompt, questionCount, ...(body.title ? { title: body.title } : {}) },
      draftProblems,
    );
  } catch (error) {
    if (error instanceof ProviderError) {
      // The reason only: never the prompt, the model's output or the key.
      deps.log.warn(
        { code: error.code, provider: provider.name, model: provider.generationModel },
        'survey generation failed at the AI provider',
      );
      throw apiErrorOf(error);
    }
    throw error;
  }
  // The provider already checked it; a draft that still fails here is our bug, never stored half-valid.
  const { draft, adjustments } = generated;
  const problems = draftProblems(draft);
  if (problems.length > 0)
    throw new Error(`generated draft failed validation: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`);
  const survey = await surveys.createSurvey(deps.db, tenant, draft);
  return { survey, adjustments, provider: provider.name, model: provider.generationModel };
}

export function toAnalysis(row: AnalysisRow): AiAnalysis {
  const result = row.status === 'completed' ? row.result : null;
  return {
    id: row.id,
    surveyId: row.survey_id,
    status: row.status,
    provider: row.provider,
    model: row.model,
    responseCount: row.response_count,
    commentCount: result?.commentCount ?? 0,
    language: result?.language ?? null,
    summary: result?.summary ?? null,
    sentiment: result?.sentiment ?? null,
    questions: result?.questions ?? [],
    responseSentiments: result?.responseSentiments ?? [],
    themes: result?.themes ?? [],
    recommendations: result?.recommendations ?? [],
    actions: result?.actions ?? [],
    anonymity: result?.anonymity ?? {
      threshold: anonymityThresholdDefault,
      suppressed: false,
      suppressedThemes: 0,
      suppressedQuestions: 0,
    },
    error: row.status === 'failed' ? row.error : null,
    errorCode: row.status === 'failed' ? row.error_code : null,
    createdAt: iso(row.created_at),
    completedAt: iso(row.completed_at),
  };
}

/** The conventions' default, shown until an analysis has applied the organization's own threshold. */
export const anonymityThresholdDefault = 5;
/** The organization's anonymity threshold (analytics settings, `updateAnalyticsSettings`), the same for every analytics
 * result. */
export async function anonymityThreshold(deps: Pick<Dependencies, 'db'>, tenant: Tenant): Promise<number> {
  return (await findThreshold(deps.db, tenant)).threshold;
}

export async function startAnalysis(
  deps: Pick<Dependencies, 'db' | 'boss' | 'config'>,
  tenant: Tenant,
  surveyId: string,
  body: AnalysisRequest,
): Promise<AiAnalysis> {
  const survey = await surveys.findSurveyOrThrow(deps.db, tenant, surveyId);
  if (body.questionIds) {
    const known = new Set(survey.questions.map((q) => q.id));
    const unknown = body.questionIds.flatMap((id, i) =>
      known.has(id)
        ? []
        : [{ path: `/body/questionIds/${i}`, message: `the survey has no question "${id}"`, code: 'not_found' }],
    );
    if (unknown.length > 0) throw validationFailed(unknown);
  }
  const provider = providerFor(deps.config.ai);
  const request: AnalysisRequest = {
    ...(body.questionIds ? { questionIds: body.questionIds } : {}),
    ...(body.focus ? { focus: body.focus } : {}),
  };
  const row = await deps.db.transaction().execute(async (tx) => {
    const inserted = await insertAnalysis(tx, tenant, {
      id: newId('ana'),
      surveyId,
      provider: provider.name,
      model: provider.model,
      request,
      responseCount: Math.min(survey.response_count, 100_000),
    });
    const data: AnalysisJobData = {
      analysisId: inserted.id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
    };
    await analysisQueue.send(deps.boss, tx, data, { priority: 1 });
    return inserted;
  });
  return toAnalysis(row);
}

export async function latestAnalysis(
  deps: Pick<Dependencies, 'db'>,
  tenant: Tenant,
  surveyId: string,
): Promise<AiAnalysis> {
  await surveys.findSurveyOrThrow(deps.db, tenant, surveyId);
  const row = await findLatestAnalysis(deps.db, tenant, surveyId);
  if (!row)
    throw new ApiError(
      404,
      'not_found',
      `Survey ${surveyId} has never been analysed; start an analysis with POST /api/v1/surveys/${surveyId}/analytics/ai/generate.`,
    );
  return toAnalysis(row);
}

export async function getAnalysis(
  deps: Pick<Dependencies, 'db'>,
  tenant: Tenant,
  surveyId: string,
  analysisId: string,
): Promise<AiAnalysis> {
  const row = await findAnalysis(deps.db, tenant, surveyId, analysisId);
  if (!row) throw notFound('AI analysis', analysisId);
  return toAnalysis(row);
}
