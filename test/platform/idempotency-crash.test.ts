/**
 * An Idempotency-Key survives a crash. The service runs as a child process; a response
 * submission with a key is held inside its transaction (the test locks the survey row it must update), a
 * duplicate meanwhile gets 409 idempotency_in_progress even after the lease has lapsed (the original still
 * holds its row), then the process is SIGKILLed mid-request. PostgreSQL rolls the write back; after the lease
 * lapses, a retry against a new process takes the key over and completes the write exactly once, and a further
 * retry is a replay.
 */
import http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../server/src/db/database.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';

const LEASE_MS = 1_500;
let database: TestDatabase;
let handle: DatabaseHandle;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  handle = openDatabase(database.url, 2);
});
afterAll(async () => {
  for (const p of processes) await p.stop('SIGKILL');
  await handle?.close();
  await database?.release();
});

function post(
  url: string,
  path: string,
  key: string,
  idempotencyKey: string,
  body: unknown,
): Promise<{
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { data?: { id: string }; error?: { code: string } };
}> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'idempotency-key': idempotencyKey,
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

const env = { IDEMPOTENCY_LEASE_MS: String(LEASE_MS), IDEMPOTENCY_WAIT_MS: '300' };

describe('Idempotency-Key across a crash', () => {
  it('a retry after SIGKILL completes the write exactly once; a live original is never taken over', async () => {
    const first = await startServiceProcess({ databaseUrl: database.url, role: 'api', env });
    processes.push(first);
    const org = await insertOrganization(handle.db, { name: 'crash', plan: 'PRO' });
    const { key } = await insertKey(handle.db, {
      organizationId: org.id,
      environment: 'LIVE',
      name: 'k',
      scopes: ['*'],
    });

    const created = await post(first.url!, '/api/v1/surveys', key, 'create-1', {
      title: 'Crash',
      questions: [{ type: 'nps', text: 'NPS?' }],
    });
    expect(created.status).toBe(201);
    const surveyId = created.body.data!.id;
    expect((await post(first.url!, `/api/v1/surveys/${surveyId}/launch`, key, 'launch-1', {})).status).toBe(200);

    // Hold the survey row: the submission blocks inside its transaction, after its insert.
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    // By its tenant too: Citus locks a row only through a statement it routes to one shard.
    const { rows: owner } = await locker.query<{ organization_id: string }>(
      'select organization_id from surveys where id = $1',
      [surveyId],
    );
    await locker.query('begin');
    await locker.query('select 1 from surveys where organization_id = $1 and id = $2 for update', [
      owner[0]!.organization_id,
      surveyId,
    ]);

    const body = { answers: [{ questionId: 'q_1', value: 9 }] };
    const original = post(first.url!, `/api/v1/surveys/${surveyId}/responses`, key, 'submit-1', body).catch(
      (error: Error) => error,
    );
    await eventually(
      async () =>
        (
          await handle.db
            .selectFrom('idempotency_keys')
            .select('state')
            .where('idempotency_key', '=', 'submit-1')
            .executeTakeFirst()
        )?.state === 'running',
      15_000,
      'the original submission to hold its key',
    );
    // Past the lease, the original still holds its row: a duplicate waits, then gets 409, and takes nothing over.
    // The pause is the point (the lease must lapse on the clock), not a wait for something to happen.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));
    const duplicate = await post(first.url!, `/api/v1/surveys/${surveyId}/responses`, key, 'submit-1', body);
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error?.code).toBe('idempotency_in_progress');
    expect(duplicate.headers['retry-after']).toBeDefined();

    // Crash mid-request, then let PostgreSQL see the dead client (it rolls the insert back).
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await original).toBeInstanceOf(Error);
    await locker.query('commit');
    await locker.end();
    const count = async () =>
      (
        await handle.db
          .selectFrom('responses')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('survey_id', '=', surveyId)
          .executeTakeFirstOrThrow()
      ).n;
    expect(await count()).toBe(0);

    // A new process; the client retries with the same key until the lease lapses (bounded by it).
    const second = await startServiceProcess({ databaseUrl: database.url, role: 'api', env });
    processes.push(second);
    const retry = await eventually(
      async () => {
        const answer = await post(second.url!, `/api/v1/surveys/${surveyId}/responses`, key, 'submit-1', body);
        if (answer.status !== 409) return answer;
        expect(answer.body.error?.code).toBe('idempotency_in_progress');
      },
      20_000,
      'the retry to take the key over',
      200,
    );
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await count()).toBe(1);

    const replay = await post(second.url!, `/api/v1/surveys/${surveyId}/responses`, key, 'submit-1', body);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data!.id).toBe(retry.body.data!.id);
    expect(await count()).toBe(1);
    await second.stop();
  }, 90_000);
});
