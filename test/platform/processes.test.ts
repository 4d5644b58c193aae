/**
 * The service as people run it: `npm start`'s first-run output, a second start, SIGTERM, the admin CLI.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { runTsx, startServiceProcess } from '../helpers/process.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

/** Whether a new TCP connection to `url` is refused (the server has stopped listening). */
function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = runTsx('scripts/cli.ts', args, { DATABASE_URL: database.url });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('npm start', () => {
  it('creates a demo organization on first start, prints its keys once, serves them, and drains on SIGTERM', async () => {
    const first = await startServiceProcess({ databaseUrl: database.url });
    const output = first.output();
    const live = /^LIVE key: (svc_live_[0-9a-f]{64})$/m.exec(output);
    const test = /^TEST key: (svc_test_[0-9a-f]{64})$/m.exec(output);
    expect(live).not.toBeNull();
    expect(test).not.toBeNull();
    expect(output).toMatch(/^Docs: http:\/\/\S+\/docs$/m);
    expect(output.indexOf('TEST key:')).toBeLessThan(output.indexOf('Docs:'));

    const me = await fetch(`${first.url}/api/v1/me`, { headers: { authorization: `Bearer ${test![1]}` } });
    const body = (await me.json()) as {
      data: { organization: { plan: string }; environment: string; apiKey: { scopes: string[] } };
    };
    expect(body.data.organization.plan).toBe('PRO');
    expect(body.data.environment).toBe('TEST');
    expect(body.data.apiKey.scopes).toEqual(['*']);

    // A request in flight when SIGTERM arrives (its body still arriving) still gets its answer; then the
    // process exits cleanly. `Expect: 100-continue` makes the server say when it has the request: Node answers
    // 100 Continue as it hands the request to the application.
    const payload = JSON.stringify({ name: 'created during shutdown', scopes: ['surveys:read'] });
    const request = http.request(`${first.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${live![1]}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
        expect: '100-continue',
      },
    });
    const inFlight = new Promise<void>((resolve) => request.once('continue', resolve));
    const answered = new Promise<number>((resolve, reject) => {
      request.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      request.on('error', reject);
    });
    request.write(payload.slice(0, 10));
    await inFlight;
    const exited = first.stop('SIGTERM');
    // The rest of the body only once the process drains: it has stopped accepting connections.
    await eventually(() => refusesConnections(first.url!), 15_000, 'the server to stop accepting connections');
    request.end(payload.slice(10));
    expect(await answered).toBe(201);
    expect(await exited).toBe(0);
    expect(first.output()).not.toMatch(/unclean shutdown/);

    const second = await startServiceProcess({ databaseUrl: database.url });
    expect(second.output()).not.toMatch(/LIVE key:|TEST key:/);
    expect(await second.stop('SIGTERM')).toBe(0);
  }, 120_000);

  it('never writes a key to its logs, even at debug level and on errors', async () => {
    const server = await startServiceProcess({ databaseUrl: database.url, env: { LOG_LEVEL: 'debug' } });
    const keys = await cli([
      'keys',
      'create',
      '--org',
      await firstOrganization(),
      '--env',
      'LIVE',
      '--scopes',
      '*',
      '--name',
      'log probe',
      '--json',
    ]);
    const key = (JSON.parse(keys.stdout) as { key: string }).key;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    expect((await fetch(`${server.url}/api/v1/me`, { headers })).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/api-keys`, { method: 'POST', headers, body: '{"name":' })).status).toBe(
      400,
    );
    const created = await fetch(`${server.url}/api/v1/api-keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'x', scopes: ['*'] }),
    });
    const secret = ((await created.json()) as { data: { key: string } }).data.key;
    await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${key.slice(0, -1)}0` } });
    expect(await server.stop('SIGTERM')).toBe(0);
    const logs = server.output();
    expect(logs).toContain('"msg":"request"'); // debug logging was on and saw the requests
    for (const value of [key, key.slice(9), secret, secret.slice(9)]) expect(logs).not.toContain(value);
  }, 60_000);

  it('runs a worker-only process that starts and stops cleanly', async () => {
    const worker = await startServiceProcess({ databaseUrl: database.url, role: 'worker' });
    expect(worker.url).toBeUndefined();
    expect(await worker.stop('SIGTERM')).toBe(0);
  }, 60_000);
});

async function firstOrganization(): Promise<string> {
  const list = await cli(['orgs', 'list', '--json']);
  return (JSON.parse(list.stdout) as Array<{ id: string }>)[0]!.id;
}

describe('admin CLI', () => {
  it('creates an organization and a key, prints the one-time key in --json, changes the plan, revokes', async () => {
    const org = await cli(['orgs', 'create', '--name', 'Acme', '--plan', 'BUSINESS', '--json']);
    expect(org.code).toBe(0);
    const organization = JSON.parse(org.stdout) as { id: string; plan: string };
    expect(organization.plan).toBe('BUSINESS');

    const created = await cli([
      'keys',
      'create',
      '--org',
      organization.id,
      '--env',
      'TEST',
      '--scopes',
      'surveys:*,responses:read',
      '--name',
      'ci',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; key: string; scopes: string[]; environment: string };
    expect(key.key).toMatch(/^svc_test_[0-9a-f]{64}$/);
    expect(key.scopes).toEqual(['surveys:*', 'responses:read']);

    const plan = await cli(['orgs', 'set-plan', '--org', organization.id, '--plan', 'STARTER', '--json']);
    expect(JSON.parse(plan.stdout)).toMatchObject({ plan: 'STARTER' });

    const revoked = await cli(['keys', 'revoke', '--id', key.id, '--json']);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: key.id, revoked: true });
    const again = await cli(['keys', 'revoke', '--id', key.id, '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ id: key.id, revoked: false });
  }, 60_000);

  it.each([
    [['orgs', 'create', '--name', 'X']],
    [['orgs', 'create', '--name', 'X', '--plan', 'GOLD']],
    [['keys', 'create', '--org', 'org_x', '--env', 'STAGING', '--scopes', '*', '--name', 'n']],
    [['keys', 'create', '--org', 'org_x', '--env', 'LIVE', '--scopes', 'everything', '--name', 'n']],
    [['frobnicate']],
    [['orgs', 'create', '--name', 'X', '--plan', 'PRO', '--unknown-flag']],
  ])(
    'prints usage and exits non-zero for %j',
    async (args) => {
      const result = await cli(args);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('Usage: npm run cli');
    },
    30_000,
  );
});
