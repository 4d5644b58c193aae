/**
 * Webhook secrets never reach the logs: a service process at debug level creates a webhook, rotates its secret and
 * sends test events to an endpoint that hangs up and one that answers 410 (the error and disabling paths).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../server/src/db/database.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { startServiceProcess } from '../helpers/process.js';
import { hangUp, startReceiver, status, type Receiver } from './receiver.js';

let database: TestDatabase;
let receiver: Receiver;
beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await database?.release();
});

it('never writes a webhook secret to its logs, even at debug level and on errors', async () => {
  const server = await startServiceProcess({
    databaseUrl: database.url,
    env: { LOG_LEVEL: 'debug', WEBHOOK_TIMEOUT_MS: '2000' },
  });
  const { db, close } = openDatabase(database.url, 2);
  const organization = await insertOrganization(db, { name: 'log probe', plan: 'PRO' });
  const { key } = await insertKey(db, {
    organizationId: organization.id,
    environment: 'LIVE',
    name: 'probe',
    scopes: ['*'],
    expiresAt: null,
  });
  await close();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = async (path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as { data: Record<string, string> };
  };
  receiver.on('/hangup', hangUp);
  receiver.on('/gone', status(410));
  const secrets: string[] = [];
  const webhookIds: string[] = [];
  for (const path of ['/hangup', '/gone']) {
    const created = await post('/api/v1/webhooks', { url: receiver.url(path), events: ['*'] });
    secrets.push(created.data.secret!);
    webhookIds.push(created.data.id!);
    const rotated = await post(`/api/v1/webhooks/${created.data.id}/rotate-secret`);
    secrets.push(rotated.data.secret!);
    await post(`/api/v1/webhooks/${created.data.id}/test`);
  }
  await receiver.waitFor('/hangup', 1);
  await receiver.waitFor('/gone', 1);
  // Both error paths have run to their end (each attempt recorded, the 410 logged) before the process stops.
  for (const id of webhookIds)
    await eventually(
      async () => {
        const listed = await fetch(`${server.url}/api/v1/webhooks/${id}/deliveries`, { headers });
        const { data } = (await listed.json()) as { data: Array<{ status: string }> };
        return data.length > 0 && data.every((delivery) => delivery.status !== 'pending');
      },
      15_000,
      `the test send of ${id} recorded`,
    );
  await eventually(() => server.output().includes('webhook disabled'), 15_000, 'the 410 logged');
  expect(await server.stop('SIGTERM')).toBe(0);
  const logs = server.output();
  expect(logs).toContain('"msg":"request"'); // debug logging was on
  expect(logs).toContain('webhook disabled'); // the 410 path ran and was logged
  for (const secret of secrets) {
    expect(secret).toMatch(/^whsec_/);
    expect(logs).not.toContain(secret.slice(6));
  }
  expect(logs).not.toContain('whsec_');
}, 60_000);
