/**
 * Crash safety: the worker runs in its own process and is killed with SIGKILL while its model call is in flight;
 * a new worker takes the analysis up (the dead-man's-switch check) and completes it exactly once: one result,
 * one `analytics.ai.completed` event. The worker logs at debug level, and neither the API key nor any comment
 * reaches its output.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import type { WorkerProcess } from '../respondents/worker-process.js';
import { startServiceProcess } from '../helpers/process.js';
import { goodAnalysis, startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { aiTenant, finished, launchedSurvey, meetingComments, startAnalysis, submitComments } from './fixtures.js';

const API_KEY = 'sk-crash-test-key-must-never-be-logged';

let t: TestService;
let fake: FakeOpenAi;
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await startTestService({ role: 'api' });
});
afterAll(async () => {
  for (const worker of workers) await worker.kill('SIGTERM');
  await t?.close();
  await fake?.close();
});

async function startWorker(): Promise<WorkerProcess> {
  const process = await startServiceProcess({
    databaseUrl: t.database.url,
    role: 'worker',
    env: {
      LOG_LEVEL: 'debug',
      AI_PROVIDER: 'openai-compatible',
      AI_BASE_URL: fake.url,
      AI_API_KEY: API_KEY,
      AI_MODEL: 'fake-crash-model',
      AI_TIMEOUT_MS: '60000',
    },
  });
  const worker: WorkerProcess = {
    child: process.child,
    exited: process.exited.then(() => undefined),
    output: process.output,
    kill: async (signal) => void (await process.stop(signal)),
  };
  workers.push(worker);
  return worker;
}

it('an analysis survives SIGKILL of its worker mid-call and completes exactly once', { timeout: 120_000 }, async () => {
  const tenant = await aiTenant(t);
  const client = tenant.live;
  const survey = await launchedSurvey(client);
  await submitComments(client, survey.id, meetingComments);

  let firstCall: () => void = () => {};
  const called = new Promise<void>((resolve) => (firstCall = resolve));
  // The first worker's call hangs (it is killed meanwhile); later calls answer; one 500 makes the survivor log a retry.
  fake.behave((request, i) => {
    if (i === 0) {
      firstCall();
      return { kind: 'hang' };
    }
    if (i === 1) return { kind: 'status', status: 500 };
    return { kind: 'content', content: goodAnalysis(request, [{ name: 'meetings', word: /meeting/i }]) };
  });

  const doomed = await startWorker();
  const accepted = await startAnalysis(client, survey.id);
  await called;
  await doomed.kill('SIGKILL');
  const interrupted = await client.unwrap(
    client.GET('/api/v1/surveys/{id}/analytics/ai/{analysisId}', {
      params: { path: { id: survey.id, analysisId: accepted.id } },
    }),
  );
  expect(interrupted.status).toBe('processing');

  const survivor = await startWorker();
  const analysis = await finished(client, survey.id, accepted.id, 90_000);
  expect(analysis.status, JSON.stringify(analysis)).toBe('completed');
  expect(analysis).toMatchObject({ provider: 'openai-compatible', model: 'fake-crash-model' });
  expect(analysis.themes.map((th) => th.name)).toEqual(['meetings']);

  const row = await t.db
    .selectFrom('ai_analyses')
    .select(['attempts'])
    .where('id', '=', accepted.id)
    .executeTakeFirstOrThrow();
  expect(row.attempts).toBe(2);
  const events = await t.db
    .selectFrom('events')
    .select('data')
    .where('organization_id', '=', tenant.organizationId)
    .where('type', '=', 'analytics.ai.completed')
    .execute();
  expect(events).toHaveLength(1);
  expect(events[0]!.data).toEqual(analysis);

  // The survivor logged the retry, but no key and no comment text.
  const output = doomed.output() + survivor.output();
  expect(survivor.output()).toMatch(/AI provider call failed; retrying/);
  expect(output).not.toContain(API_KEY);
  for (const comment of meetingComments) expect(output).not.toContain(comment.slice(0, 25));
});
