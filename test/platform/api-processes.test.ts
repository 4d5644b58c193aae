/**
 * API_PROCESSES=2 runs two API processes on one port (node:cluster), and the per-process key
 * cache stays correct across them: a key revoked through one process is refused by every process at once.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startServiceProcess } from '../helpers/process.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.release();
});

describe('API_PROCESSES', () => {
  it('serves from two processes; a revocation is seen by both at once; SIGTERM drains them all', async () => {
    const server = await startServiceProcess({ databaseUrl: database.url, env: { API_PROCESSES: '2' } });
    try {
      const output = server.output();
      expect(output.match(/^API: /gm)).toHaveLength(1);
      const admin = /^LIVE key: (svc_live_[0-9a-f]{64})$/m.exec(output)![1]!;
      const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/api/v1/api-keys`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'short-lived', scopes: ['surveys:read'] }),
      });
      const { data } = (await created.json()) as { data: { id: string; key: string } };
      const probe = () =>
        fetch(`${server.url}/api/v1/surveys`, {
          headers: { authorization: `Bearer ${data.key}`, connection: 'close' },
        }).then((r) => r.status);
      // Warm both processes' caches (connections are handed out round-robin).
      expect(await Promise.all(Array.from({ length: 8 }, probe))).toEqual(Array(8).fill(200));
      expect((await fetch(`${server.url}/api/v1/api-keys/${data.id}`, { method: 'DELETE', headers })).status).toBe(200);
      // Notifications travel in milliseconds (allow for a loaded CI machine); then every process refuses the key.
      await vi.waitFor(
        async () => expect(await Promise.all(Array.from({ length: 8 }, probe))).toEqual(Array(8).fill(401)),
        { timeout: 3_000, interval: 50 },
      );
      expect(await Promise.all(Array.from({ length: 8 }, probe))).toEqual(Array(8).fill(401));
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  }, 120_000);
});
