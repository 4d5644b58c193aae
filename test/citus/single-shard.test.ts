/**
 * On Citus, one tenant's requests stay on that tenant's shard: every operation of the contract, called through the
 * SDK with one organization's key, plus the respondent's pages (the answer page of a personal link and of an embed,
 * GET and POST, the unsubscribe link, GET and the one-click POST, a link's QR code, and the kiosk page with a right
 * and a wrong code), runs no multi-shard query on any node. That covers authentication (a key resolved to its
 * tenant, a fresh one and an unknown one), idempotency (a first request with an `Idempotency-Key` and its replay;
 * the SDK gives every POST a key) and the rate limits that every authenticated request spends. Skipped unless
 * `CITUS=1` (test/citus/cluster.ts).
 *
 * Citus counts, per node and per database, the distributed queries it executes (`citus_stat_counters`, on while
 * `citus.enable_stat_counters` is): `query_execution_single_shard` for a plan of one task, which runs on one
 * shard (or on the one placement set of a reference table), `query_execution_multi_shard` for a plan of several.
 * A statement that a trigger runs on a worker's shard is planned, and counted, on that worker: the counters are
 * summed over every node. Only the API runs while they count (`role: 'api'`): no job worker and no webhook
 * dispatcher, whose queries are not a request's. What needs a job's result (a sent distribution's links, a
 * completed export) is made first, by a worker that is stopped before the counters are reset; jobs enqueued in the
 * measured window stay queued, and their operations are measured by the 2xx of the request itself.
 *
 * The database logs each multi-shard plan with its statement (`CITUS_LOG_MULTI_SHARD`): a failure lists those of
 * this database's sessions from /var/tmp/citus-cluster/node*.log, each under the request that preceded it
 * (multi-shard-log.ts).
 */
import { createClient, type SurveyServiceClient } from '@survey-service/sdk';
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { createLogger } from '../../server/src/logger.js';
import { startProcess, type RunningProcess } from '../../server/src/start.js';
import { loadDocument, operations } from '../contract/document.js';
import { activeSurvey, allRecipients, insertPeople, people, waitForStatus } from '../distributions/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, surveyBody, tenantWithRaisedLimits, validAnswers, validForm } from '../helpers/surveys.js';
import { citusMode } from './cluster.js';
import {
  logDir,
  markLogs,
  multiShardPlans,
  oneLine,
  readLogs,
  watchSessions,
  type LogMark,
  type Sessions,
} from './multi-shard-log.js';

interface Counters {
  singleShard: number;
  multiShard: number;
}

/** This database's counters, summed over the coordinator and the workers. */
async function counters(admin: pg.Client): Promise<Counters & { nodes: string[] }> {
  const { rows } = await admin.query<{ result: string; success: boolean; nodeid: number }>(
    `select nodeid, success, result from run_command_on_all_nodes($$
       select query_execution_single_shard || ',' || query_execution_multi_shard
       from citus_stat_counters where name = current_database()$$)`,
  );
  const total = { singleShard: 0, multiShard: 0, nodes: [] as string[] };
  for (const row of rows) {
    if (!row.success) throw new Error(`citus_stat_counters on node ${row.nodeid}: ${row.result}`);
    const [single, multi] = row.result.split(',').map(Number);
    total.singleShard += single!;
    total.multiShard += multi!;
    total.nodes.push(`node ${row.nodeid}: ${single} single-shard, ${multi} multi-shard`);
  }
  return total;
}

/**
 * The distributed executions the coordinator has run for this database: each is one plan sent from the coordinator
 * to a worker, a round trip between machines in a real cluster. What a delegated function or a shard's trigger runs
 * on the worker itself is counted on that worker, not here.
 */
async function coordinatorExecutions(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    `select (query_execution_single_shard + query_execution_multi_shard)::text as n
     from citus_stat_counters where name = current_database()`,
  );
  return Number(rows[0]?.n ?? 0);
}

async function resetCounters(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ result: string; success: boolean; nodeid: number }>(
    `select nodeid, success, result from run_command_on_all_nodes($$select citus_stat_counters_reset()$$)`,
  );
  for (const row of rows) if (!row.success) throw new Error(`reset on node ${row.nodeid}: ${row.result}`);
}

/** The contract's operations, with a pattern for the paths each one serves (literal paths tried first). */
const documented = operations(loadDocument())
  .map((op) => ({
    operationId: String(op.operation.operationId),
    method: op.method.toUpperCase(),
    pattern: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    templates: (op.path.match(/\{/g) ?? []).length,
  }))
  .sort((a, b) => a.templates - b.templates);

function operationOf(method: string, pathname: string): string | undefined {
  return documented.find((op) => op.method === method && op.pattern.test(pathname))?.operationId;
}

/** One request of the measured window, named by its operationId (or the respondent page it is). */
interface Call {
  name: string;
  method: string;
  path: string;
  status: number;
  /** What it must answer when that is not a success (an unknown key's 401). */
  expected?: number;
  replayed: boolean;
  /** Distributed executions the coordinator ran while the request was served (see coordinatorExecutions). */
  executions: number;
  /** The logs' sizes when it was sent. */
  mark: LogMark;
}

const formPost = (fields: Array<[string, string]>, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual',
});

/** The `data` of an SDK call, or an error naming the request and its answer. */
async function dataOf<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await request;
  if (data === undefined) {
    throw new Error(`${new URL(response.url).pathname} answered ${response.status}: ${JSON.stringify(error)}`);
  }
  return data;
}

describe.skipIf(!citusMode)('one tenant on Citus', () => {
  let t: TestService;
  let admin: pg.Client;
  let worker: RunningProcess | undefined;
  let watch: Awaited<ReturnType<typeof watchSessions>> | undefined;
  beforeAll(async () => {
    vi.stubEnv('CITUS_LOG_MULTI_SHARD', '1');
    t = await startTestService({ role: 'api' });
    // Links point at this server (its port is known only once it listens).
    t.service.deps.config.publicBaseUrl = t.url;
    admin = new pg.Client({ connectionString: t.database.url });
    await admin.connect();
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await worker?.close();
    await watch?.stop();
    await admin?.end();
    await t?.close();
  });

  // Every operation once through the cluster: about 110 s alone on a loaded 2-core machine, so the limit leaves room
  // for the test files that run beside it.
  it('runs every operation of the contract, and the respondent pages, on one shard', async () => {
    const tenant = await tenantWithRaisedLimits(t);
    const { organizationId, liveKey } = tenant;
    // A second tenant with rows of its own: a fan-out would have other shards to visit.
    const other = await tenantWithRaisedLimits(t);
    await other.live.unwrap(other.live.POST('/api/v1/surveys', { body: surveyBody() }));
    await insertPeople(t, other.organizationId, people(3, 'O'));

    // What needs a job's result, made by a worker that is gone before the counters start.
    worker = await startProcess(
      {
        ...loadConfig([]),
        role: 'worker',
        port: 0,
        host: '127.0.0.1',
        validateResponses: true,
        shutdownGraceMs: 5_000,
        allowLoopbackWebhooks: true,
        databasePoolSize: 3,
      },
      t.database.url,
      createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    );
    const setup = tenant.live;
    await insertPeople(t, organizationId, people(3, 'P'));
    const sentSurveyId = await activeSurvey(setup);
    const distribute = (method: 'link' | 'embed' | 'kiosk') =>
      dataOf(
        setup.POST('/api/v1/surveys/{surveyId}/distribute', {
          params: { path: { surveyId: sentSurveyId } },
          body: { targeting: { filters: [] }, distribution: { method } },
        }),
      ).then((d) => d.data);
    const linked = await distribute('link');
    const embedded = await distribute('embed');
    const kiosked = await distribute('kiosk');
    await waitForStatus(setup, sentSurveyId, linked.id, ['sent']);
    await waitForStatus(setup, sentSurveyId, kiosked.id, ['sent']);
    const [kioskCode] = (await allRecipients(setup, sentSurveyId, kiosked.id)).map((r) => r.accessCode);
    expect(kioskCode, 'the kiosk distribution has its codes').toBeTruthy();
    const embed = await waitForStatus(setup, sentSurveyId, embedded.id, ['sent']);
    const embedUrl = /src="([^"]+)"/.exec(embed.embedCode ?? '')?.[1];
    expect(embedUrl, 'the embed distribution has its code').toBeDefined();
    const links = (await allRecipients(setup, sentSurveyId, linked.id)).map((r) => r.link);
    expect(links).toHaveLength(3);
    const tokenOf = (link: string) => new URL(link).pathname.replace(/^\/s\//, '');
    await dataOf(
      setup.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: sentSurveyId } },
        body: { answers: validAnswers, respondentExternalId: 'P-0002' },
      }),
    );
    const finished = await dataOf(
      setup.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: sentSurveyId } },
        body: { format: 'csv' },
      }),
    );
    const completedExport = await setup.exports.wait(finished.data.id, {
      initialDelayMs: 100,
      maxDelayMs: 500,
      timeoutMs: 60_000,
    });
    expect(completedExport.status).toBe('completed');
    // An access request carried out, for its file.
    const accessRequest = await setup.privacy.requests.create({ type: 'access', subject: { externalId: 'P-0002' } });
    const accessDone = await setup.privacy.requests.wait(accessRequest.id, { initialDelayMs: 100, timeoutMs: 60_000 });
    expect(accessDone.status).toBe('completed');
    await worker.close();
    worker = undefined;

    // The measured window: the API alone, this tenant's requests one after the other.
    const calls: Call[] = [];
    const record = (call: Omit<Call, 'mark' | 'replayed'> & { replayed?: boolean }, mark: LogMark) =>
      calls.push({ replayed: false, ...call, mark });
    /** The coordinator's executions while `send` runs, its answer read to the end. */
    const counted = async (send: () => Promise<Response>): Promise<[Response, number]> => {
      const start = await coordinatorExecutions(admin);
      const response = await send();
      await response.clone().arrayBuffer();
      return [response, (await coordinatorExecutions(admin)) - start];
    };
    const recordingClient = (apiKey: string, expected?: number): SurveyServiceClient =>
      createClient({
        apiKey,
        baseUrl: t.url,
        retry: { maxRetries: 0 },
        fetch: async (request) => {
          const mark = markLogs();
          const [response, executions] = await counted(() => fetch(request));
          const { pathname } = new URL(request.url);
          const name = operationOf(request.method, pathname) ?? `undocumented ${request.method} ${pathname}`;
          const replayed = response.headers.get('idempotent-replayed') === 'true';
          const method = request.method;
          record({ name, method, path: pathname, status: response.status, replayed, expected, executions }, mark);
          return response;
        },
      });
    /** A respondent's page: no key, outside the contract. */
    const page = async (name: string, url: string, init?: RequestInit, expected?: number) => {
      const mark = markLogs();
      const [response, executions] = await counted(() => fetch(url, init));
      const path = new URL(url).pathname;
      record({ name, method: init?.method ?? 'GET', path, status: response.status, expected, executions }, mark);
      return response;
    };
    const live = recordingClient(liveKey);

    watch = await watchSessions(t.database.url);
    await resetCounters(admin);
    const before = await counters(admin);
    expect(before.multiShard).toBe(0);
    const windowStart = markLogs();

    // Meta and the caller.
    await live.GET('/health/live');
    await live.GET('/health/ready');
    await live.GET('/api/v1/openapi.json');
    await live.GET('/api/v1/me');

    // Webhooks first: every later event is then queued for one.
    const webhook = await dataOf(
      live.POST('/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/survey-hook', events: ['*'] } }),
    );
    const webhookId = webhook.data.id;
    const webhookPath = { params: { path: { id: webhookId } } };
    await live.GET('/api/v1/webhooks');
    await live.GET('/api/v1/webhooks/{id}', webhookPath);
    await live.PATCH('/api/v1/webhooks/{id}', { ...webhookPath, body: { description: 'Every event' } });
    await live.POST('/api/v1/webhooks/{id}/rotate-secret', webhookPath);
    const delivery = await dataOf(live.POST('/api/v1/webhooks/{id}/test', webhookPath));
    const deliveryPath = { params: { path: { id: webhookId, deliveryId: delivery.data.id } } };
    await live.GET('/api/v1/webhooks/{id}/deliveries', webhookPath);
    await live.GET('/api/v1/webhooks/{id}/deliveries/{deliveryId}', deliveryPath);
    await live.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', deliveryPath);

    // Surveys: a create with an Idempotency-Key, then its replay.
    const idempotencyKey = `single-shard-${Date.now()}`;
    // Its first question carries a key, so that the trend of the key measures it.
    const createBody = surveyBody({
      title: 'Measured',
      questions: allTypes.map((question, i) => (i === 0 ? { ...question, key: 'engagement.recommend' } : question)),
    });
    const created = await dataOf(
      live.POST('/api/v1/surveys', { body: createBody, headers: { 'Idempotency-Key': idempotencyKey } }),
    );
    const replay = await dataOf(
      live.POST('/api/v1/surveys', { body: createBody, headers: { 'Idempotency-Key': idempotencyKey } }),
    );
    expect(replay.data.id, 'the replay answers the first request').toBe(created.data.id);
    const surveyId = created.data.id;
    const survey = { params: { path: { id: surveyId } } };
    await live.GET('/api/v1/surveys');
    await live.GET('/api/v1/surveys/{id}', survey);
    await live.PATCH('/api/v1/surveys/{id}', { ...survey, body: { title: 'Measured, renamed' } });
    await live.POST('/api/v1/surveys/{id}/launch', survey);
    // A change after the launch is a version; versions are listed and read.
    await live.PATCH('/api/v1/surveys/{id}', { ...survey, body: { description: 'Measured, version 2' } });
    await live.GET('/api/v1/surveys/{id}/versions', survey);
    await live.GET('/api/v1/surveys/{id}', { params: { path: { id: surveyId }, query: { version: 1 } } });
    // Translations: a language added (a version), its strings written, read and removed.
    await live.PATCH('/api/v1/surveys/{id}', { ...survey, body: { languages: ['en', 'de'] } });
    const german = { params: { path: { id: surveyId, language: 'de' } } };
    await live.PUT('/api/v1/surveys/{id}/translations/{language}', {
      ...german,
      body: { title: 'Gemessen', questions: {} },
    });
    await live.GET('/api/v1/surveys/{id}/translations/{language}', german);
    await live.DELETE('/api/v1/surveys/{id}/translations/{language}', german);
    const generated = await dataOf(
      live.POST('/api/v1/surveys/generate', { body: { prompt: 'Weekly team pulse on workload', questionCount: 3 } }),
    );
    const draft = { params: { path: { id: generated.data.id } } };
    await live.POST('/api/v1/surveys/{id}/launch', draft);
    await live.POST('/api/v1/surveys/{id}/pause', draft);
    await live.POST('/api/v1/surveys/{id}/close', draft);
    await live.DELETE('/api/v1/surveys/{id}', draft);

    // Responses: a submission with an Idempotency-Key and its replay, another, reads and a deletion.
    const submitKey = `single-shard-response-${Date.now()}`;
    const submitBody = { answers: validAnswers, respondentExternalId: 'E-1' };
    const submitted = await dataOf(
      live.POST('/api/v1/surveys/{id}/responses', {
        ...survey,
        body: submitBody,
        headers: { 'Idempotency-Key': submitKey },
      }),
    );
    await live.POST('/api/v1/surveys/{id}/responses', {
      ...survey,
      body: submitBody,
      headers: { 'Idempotency-Key': submitKey },
    });
    const second = await dataOf(
      live.POST('/api/v1/surveys/{id}/responses', { ...survey, body: { answers: validAnswers } }),
    );
    await live.GET('/api/v1/surveys/{id}/responses', survey);
    await live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: surveyId, responseId: submitted.data.id } },
    });
    await live.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: surveyId, responseId: second.data.id } },
    });

    // Exports: a new one (queued), and the file and deletions of the one completed before the window.
    const queuedExport = await dataOf(
      live.POST('/api/v1/surveys/{id}/responses/export', { ...survey, body: { format: 'csv' } }),
    );
    await live.GET('/api/v1/exports/{exportId}', { params: { path: { exportId: queuedExport.data.id } } });
    const completed = { params: { path: { exportId: completedExport.id } } };
    await live.GET('/api/v1/exports/{exportId}/download', { ...completed, parseAs: 'text' });
    await live.GET('/api/v1/exports/{exportId}/deletions', completed);

    // Analytics.
    await live.GET('/api/v1/surveys/{id}/analytics/static', survey);
    await live.GET('/api/v1/surveys/{id}/analytics/smart', survey);
    await live.GET('/api/v1/surveys/{id}/analytics/smart', {
      params: { path: { id: surveyId }, query: { compareTo: 'previousCycle' } },
    });
    await live.GET('/api/v1/analytics/trends', { params: { query: { questionKey: 'engagement.recommend' } } });
    // A manager's tree (each response's frozen chain), static and smart.
    const managerTree = { params: { path: { id: surveyId }, query: { segmentBy: 'managerTree', manager: 'E-1' } } };
    await live.GET('/api/v1/surveys/{id}/analytics/static', managerTree);
    await live.GET('/api/v1/surveys/{id}/analytics/smart', managerTree);
    const analysis = await dataOf(live.POST('/api/v1/surveys/{id}/analytics/ai/generate', { ...survey, body: {} }));
    await live.GET('/api/v1/surveys/{id}/analytics/ai', survey);
    await live.GET('/api/v1/surveys/{id}/analytics/ai/{analysisId}', {
      params: { path: { id: surveyId, analysisId: analysis.data.id } },
    });
    await live.GET('/api/v1/settings/analytics');
    await live.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 5 } });

    // Respondents.
    const respondent = (externalId: string) => ({ params: { path: { externalId } } });
    await live.PUT('/api/v1/respondents/{externalId}', {
      ...respondent('E-1'),
      body: { email: 'ada@example.com', firstName: 'Ada', department: 'Engineering' },
    });
    await live.PUT('/api/v1/respondents/{externalId}', {
      ...respondent('E-2'),
      body: { email: 'grace@example.com', firstName: 'Grace', department: 'Engineering' },
    });
    await live.GET('/api/v1/respondents/{externalId}', respondent('E-1'));
    await live.GET('/api/v1/respondents', {});
    await live.DELETE('/api/v1/respondents/{externalId}', respondent('E-2'));
    const sync = await dataOf(
      live.POST('/api/v1/respondents/sync', {
        body: {
          mode: 'upsert',
          respondents: [
            { externalId: 'E-3', email: 'alan@example.com', department: 'Sales' },
            // A manager edge: the sync's cycle check reads the chain above E-3.
            { externalId: 'E-4', email: 'edsger@example.com', department: 'Support', managerId: 'E-3' },
          ],
        },
      }),
    );
    await live.GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId: sync.data.jobId } } });

    // Distributions: a preview and a send (queued) of the measured survey, the links of the one sent before.
    const targeting = { filters: [{ field: 'department', operator: 'equals' as const, value: 'Engineering' }] };
    await live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      params: { path: { surveyId } },
      body: { targeting },
    });
    // Everyone below a manager: the recursive walk of `under`, tenant-scoped at every step.
    await live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [{ field: 'managerId', operator: 'under', value: 'E-3' }] } },
    });
    const distribution = await dataOf(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting, distribution: { method: 'link' } },
      }),
    );
    await live.GET('/api/v1/surveys/{surveyId}/distributions', { params: { path: { surveyId } } });
    await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
      params: { path: { surveyId, distributionId: distribution.data.id } },
    });
    await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
      params: { path: { surveyId: sentSurveyId, distributionId: linked.id } },
    });
    // Kiosk codes: a kiosk distribution (its code prefix claimed in the reference table), the codes as CSV.
    await live.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting, distribution: { method: 'kiosk' } },
    });
    await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients.csv', {
      params: { path: { surveyId: sentSurveyId, distributionId: kiosked.id } },
      parseAs: 'text',
    });

    // The respondent's pages: a personal link and an embed, each shown and answered; an unsubscribe link.
    await page('answer page GET /s/{token} (personal)', links[0]!);
    await page('answer page POST /s/{token} (personal)', links[0]!, formPost(validForm));
    await page('answer page GET /s/{token} (embed)', embedUrl!);
    await page('answer page POST /s/{token} (embed)', embedUrl!, formPost(validForm));
    const unsubscribe = `${t.url}/u/${tokenOf(links[1]!)}`;
    await page('unsubscribe GET /u/{token}', unsubscribe);
    await page(
      'unsubscribe POST /u/{token} (one-click)',
      unsubscribe,
      formPost([['List-Unsubscribe', 'One-Click']], { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' }),
    );
    // A personal link's QR code; the kiosk page, a right code (303 to its answer page) and a wrong one (400).
    await page('QR code GET /s/{token}/qr.svg', `${links[2]}/qr.svg`);
    await page('kiosk page GET /k', `${t.url}/k`);
    await page('kiosk page POST /k (right code)', `${t.url}/k`, formPost([['code', kioskCode!]]), 303);
    const wrong = `${kioskCode!.slice(0, 5)}${kioskCode!.slice(5, 9) === '0000' ? '1111' : '0000'}${kioskCode!.slice(9)}`;
    await page('kiosk page POST /k (wrong code)', `${t.url}/k`, formPost([['code', wrong]]), 400);

    // SCIM: discovery, a user's life (created, found by a filter, read, replaced, patched, deleted) and a bulk.
    await live.GET('/scim/v2/ServiceProviderConfig');
    await live.GET('/scim/v2/ResourceTypes');
    await live.GET('/scim/v2/Schemas');
    await live.GET('/scim/v2/ResourceTypes/{id}', { params: { path: { id: 'User' } } });
    await live.GET('/scim/v2/Schemas/{id}', {
      params: { path: { id: 'urn:ietf:params:scim:schemas:extension:survey-service:2.0:User' } },
    });
    const scimUser = { userName: 'scim@example.com', externalId: 'E-scim' };
    const scimId = ((await live.POST('/scim/v2/Users', { body: scimUser })).data as { id: string }).id;
    const scimPath = { params: { path: { id: scimId } } };
    await live.GET('/scim/v2/Users', { params: { query: { filter: 'userName eq "scim@example.com"' } } });
    const byAttribute = 'urn:ietf:params:scim:schemas:extension:survey-service:2.0:User:attributes.level ge 3';
    await live.GET('/scim/v2/Users', { params: { query: { filter: byAttribute } } });
    await live.GET('/scim/v2/Users/{id}', scimPath);
    await live.PUT('/scim/v2/Users/{id}', { ...scimPath, body: { ...scimUser, title: 'Engineer' } });
    await live.PATCH('/scim/v2/Users/{id}', {
      ...scimPath,
      body: { Operations: [{ op: 'replace', path: 'active', value: false }] },
    });
    await live.POST('/scim/v2/Bulk', {
      body: { Operations: [{ method: 'POST', path: '/Users', bulkId: 'b', data: { userName: 'bulk@example.com' } }] },
    });
    await live.DELETE('/scim/v2/Users/{id}', scimPath);

    // Privacy requests: a dry-run erasure (queued), the list, one read, and the file of the one carried out before.
    await live.POST('/api/v1/privacy-requests', {
      body: { type: 'erasure', subject: { externalId: 'P-0001' }, scope: 'identity_and_responses', dryRun: true },
    });
    await live.GET('/api/v1/privacy-requests');
    const accessPath = { params: { path: { id: accessRequest.id } } };
    await live.GET('/api/v1/privacy-requests/{id}', accessPath);
    await live.GET('/api/v1/privacy-requests/{id}/download', { ...accessPath, parseAs: 'text' });

    // Events, and keys: a new key authenticates (its first lookup), an unknown one does not, then the revocation.
    await live.GET('/api/v1/events');
    await live.GET('/api/v1/api-keys');
    const key = await dataOf(live.POST('/api/v1/api-keys', { body: { name: 'measured', scopes: ['surveys:read'] } }));
    const fresh = recordingClient(key.data.key ?? 'svc_live_no_key_returned');
    await fresh.GET('/api/v1/surveys');
    const unknown = recordingClient(`${liveKey.slice(0, -4)}${liveKey.endsWith('0000') ? '1111' : '0000'}`, 401);
    await unknown.GET('/api/v1/me');
    await live.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.data.id } } });
    await live.DELETE('/api/v1/webhooks/{id}', webhookPath);
    // The audit log: the reads and key changes above wrote its entries; a page, and the next by its cursor.
    const auditPage = await dataOf(live.GET('/api/v1/audit-log', { params: { query: { limit: 5 } } }));
    await live.GET('/api/v1/audit-log', {
      params: { query: { cursor: auditPage.pagination.nextCursor ?? undefined } },
    });

    // The retention policy: read, replaced (an exception for the measured survey) and previewed.
    await live.GET('/api/v1/settings/retention');
    await live.PUT('/api/v1/settings/retention', {
      body: {
        responses: { afterDays: 365, basis: 'submission', action: 'anonymize' },
        surveyExceptions: [{ surveyId, responses: { afterDays: 30, basis: 'survey_close', action: 'delete' } }],
        legalHolds: [{ surveyId: null, reason: 'measured' }],
      },
    });
    await live.GET('/api/v1/settings/retention/preview');

    const windowEnd = markLogs();
    const after = await counters(admin);
    const sessions = await watch.stop();
    watch = undefined;

    const summary = calls.map(
      (c) =>
        `${c.name}: ${c.status}${c.replayed ? ' (replayed)' : ''}${c.expected ? ` (expected ${c.expected})` : ''}, ` +
        `${c.executions} coordinator executions`,
    );
    if (process.env.CITUS_EXECUTIONS_REPORT) writeFileSync(process.env.CITUS_EXECUTIONS_REPORT, summary.join('\n'));
    // Where the multi-shard plans came from, in every message: a failed request may explain one.
    const plans =
      after.multiShard > 0 ? `\n${multiShardReport(calls, windowStart, windowEnd, t.database.name, sessions)}` : '';
    const report = `requests:\n  ${summary.join('\n  ')}\ncounters:\n  ${after.nodes.join('\n  ')}${plans}`;

    // Every operation of the contract was called.
    const called = new Set(calls.map((c) => c.name));
    const missing = documented.map((op) => op.operationId).filter((id) => !called.has(id));
    expect(missing, `operations of the contract not called: ${missing.join(', ')}\n${report}`).toEqual([]);
    expect(
      [...called].filter((name) => name.startsWith('undocumented')),
      report,
    ).toEqual([]);
    // Every request did what it was sent for (a failed one proves nothing about where it ran).
    for (const c of calls) {
      if (c.expected) expect(c.status, `${c.name}\n${report}`).toBe(c.expected);
      else expect(c.status, `${c.name}\n${report}`).toBeLessThan(300);
    }
    expect(
      calls.filter((c) => c.replayed).map((c) => c.name),
      `both Idempotency-Key replays\n${report}`,
    ).toEqual(['createSurvey', 'submitResponse']);
    expect(after.singleShard, report).toBeGreaterThan(before.singleShard);
    expect(after.multiShard, `${after.multiShard} multi-shard plans in the window\n${report}`).toBe(0);
  }, 360_000);
});

/** The multi-shard plans this database's sessions logged in the window, grouped under the request before each. */
function multiShardReport(
  calls: readonly Call[],
  from: LogMark,
  to: LogMark,
  database: string,
  sessions: Sessions,
): string {
  const { records, problems } = readLogs(from, to);
  const plans = multiShardPlans(records);
  const databaseOf = (node: string, pid: number) => sessions.get(node)?.get(pid);
  const kept = plans.filter((p) => [database, undefined].includes(databaseOf(p.node, p.pid)));
  const byCall = new Map<string, Map<string, number>>();
  for (const plan of kept) {
    // The last request sent before the plan was logged on that node.
    const call = calls.findLast((c) => (c.mark.get(plan.node) ?? 0) <= plan.offset);
    const name = call ? `${call.name} (${call.method} ${call.path})` : 'before the first request';
    const unattributed = databaseOf(plan.node, plan.pid) === undefined ? ' [session of an unknown database]' : '';
    const where = `${plan.node}${unattributed}: ${oneLine(plan.statement || '(no STATEMENT line)')}${
      plan.context ? `\n      context: ${oneLine(plan.context, 300)}` : ''
    }`;
    const statements = byCall.get(name) ?? new Map<string, number>();
    statements.set(where, (statements.get(where) ?? 0) + 1);
    byCall.set(name, statements);
  }
  const lines = [`multi-shard statements logged by this database's sessions (${logDir}/node*.log):`];
  for (const [name, statements] of byCall) {
    lines.push(`  ${name}`);
    for (const [statement, count] of statements) lines.push(`    ${count > 1 ? `${count}× ` : ''}${statement}`);
  }
  if (kept.length === 0) lines.push('  none found in the logs');
  if (plans.length > kept.length) lines.push(`  (${plans.length - kept.length} of other databases' sessions left out)`);
  for (const problem of problems) lines.push(`  could not read ${problem}`);
  return lines.join('\n');
}
