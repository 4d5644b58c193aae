/**
 * The worker side of an AI analysis.
 *
 * Crash safety is job ownership (jobs/owned.ts): the run holds a session advisory lock on the analysis
 * (PostgreSQL drops it the moment the worker dies, even on SIGKILL) and, before working, enqueues a check of the
 * same analysis a few seconds ahead. A check that finds the lock held looks again later; one that finds it free
 * and the analysis unfinished runs it; one that finds it finished stops. Exactly once in effect: the result, the
 * final status and the `analytics.ai.completed` event are written in one transaction, by an UPDATE that only
 * moves an unfinished analysis — a second run can compute again but never completes it twice.
 *
 * Provider failures (timeouts, 429 with `Retry-After`, 5xx, malformed output) are retried here with doubling
 * back-off, then end in a `failed` analysis with its code. A request never waits for any of this.
 */
import type { Tenant } from '../../db/tenant.js';
import type { Dependencies } from '../../dependencies.js';
import { checkAgainLater, runOwned, type Watchdog } from '../../jobs/owned.js';
import { recordEvent } from '../events/index.js';
import { respondentNamePartsAmong } from '../respondents/index.js';
import { assemble, prepareInput, textsOf } from './analysis.js';
import { ProviderError, type TextFindings } from './provider.js';
import { nameCandidates } from './redact.js';
import { finishAnalysis, findAnalysisById, responsesToAnalyse, startRun } from './repository.js';
import { analysisQueue, type AnalysisJobData } from './queue.js';
import { anonymityThreshold, providerFor, toAnalysis } from './service.js';
import type { AnalysisErrorCode } from './tables.js';
import * as surveyRepository from '../surveys/index.js';

/** An analysis whose worker died this many times fails instead of starting again. */
const MAX_RUNS = 5;

type RunDeps = Pick<Dependencies, 'db' | 'boss' | 'log' | 'config'>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A check of the analysis (the dead-man's switch), behind new analyses (priority 0). */
const check =
  (deps: RunDeps, data: AnalysisJobData): Watchdog =>
  (seconds) =>
    analysisQueue.send(deps.boss, deps.db, data, { startAfter: seconds, priority: 0 });

async function withRetries(
  deps: RunDeps,
  analysisId: string,
  call: () => Promise<TextFindings>,
): Promise<TextFindings> {
  const { maxAttempts, retryBaseMs } = deps.config.ai;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.retryable || attempt >= maxAttempts) throw error;
      const backOff = retryBaseMs * 2 ** (attempt - 1);
      const wait = Math.max(backOff, error.retryAfterMs ?? 0);
      // The reason only: never the prompt, the comments or the key.
      deps.log.warn({ analysisId, attempt, code: error.code, waitMs: wait }, 'AI provider call failed; retrying');
      await sleep(wait);
    }
  }
}

async function fail(
  deps: RunDeps,
  tenant: Tenant,
  id: string,
  errorCode: AnalysisErrorCode,
  error: string,
): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    const row = await finishAnalysis(tx, tenant, id, { status: 'failed', error, errorCode });
    if (row) await recordEvent(tx, tenant, 'analytics.ai.completed', toAnalysis(row));
  });
}

/**
 * Runs one analysis if no live worker owns it (jobs/owned.ts). `busy`: another live worker holds it; `finished`:
 * nothing (more) to do here.
 */
export async function runAnalysis(deps: RunDeps, data: AnalysisJobData): Promise<'busy' | 'finished'> {
  const tenant: Tenant = { organizationId: data.organizationId, environment: data.environment };
  const id = data.analysisId;
  return runOwned(
    deps,
    {
      lock: `ai.analyse:${id}`,
      async load(conn) {
        const found = await findAnalysisById(conn, tenant, id);
        return found && found.status !== 'completed' && found.status !== 'failed' ? found : undefined;
      },
      maxRuns: {
        limit: MAX_RUNS,
        count: (found) => found.attempts,
        giveUp: () =>
          fail(deps, tenant, id, 'internal_error', `The analysis stopped after ${MAX_RUNS} interrupted runs.`),
      },
      async beginRun(conn, found) {
        const provider = providerFor(deps.config.ai);
        const started = await startRun(conn, tenant, id, provider.name, provider.model);
        return started ? { found, provider } : undefined;
      },
      watchdog: check(deps, data),
    },
    async (conn, { found, provider }) => {
      const survey = await surveyRepository.findSurvey(conn, tenant, found.survey_id);
      if (!survey) return;
      const responses = await responsesToAnalyse(conn, tenant, survey.id);
      const threshold = await anonymityThreshold(deps, tenant);
      // Whichever the provider: the respondents' names that occur in these texts, looked up by those words only.
      const names = await respondentNamePartsAmong(
        conn,
        tenant,
        nameCandidates(textsOf(survey, responses, found.request)),
      );
      const prepared = prepareInput(survey, responses, { ...found.request, respondentNames: names });
      let findings: TextFindings;
      try {
        findings =
          prepared.input.comments.length === 0
            ? { language: null, sentiments: [], themes: [] }
            : await withRetries(deps, id, () => provider.analyseComments(prepared.input));
      } catch (error) {
        if (error instanceof ProviderError) {
          await fail(deps, tenant, id, error.code, `${error.message} (after ${deps.config.ai.maxAttempts} attempts)`);
          return;
        }
        throw error;
      }
      const result = assemble(prepared, responses, findings, threshold);
      await deps.db.transaction().execute(async (tx) => {
        const row = await finishAnalysis(tx, tenant, id, {
          status: 'completed',
          result,
          responseCount: responses.length,
        });
        if (row) await recordEvent(tx, tenant, 'analytics.ai.completed', toAnalysis(row));
      });
    },
  );
}

/** The dead-man's switch: while the analysis's owner is alive, look again later. */
export async function checkLater(deps: RunDeps, data: AnalysisJobData): Promise<void> {
  const row = await findAnalysisById(
    deps.db,
    { organizationId: data.organizationId, environment: data.environment },
    data.analysisId,
  );
  if (row && (row.status === 'pending' || row.status === 'processing')) await checkAgainLater(check(deps, data));
}
