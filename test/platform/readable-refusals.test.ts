/**
 * Refusals a client can read: an answer decided from the headers (413 for a declared Content-Length over the
 * route's limit, 401 without a valid key) or from the first bytes of a chunked body past the limit reaches a
 * client that is still sending, because the server keeps reading and discarding a bounded amount of the body
 * before it closes; and every spelling of a path meets the same key and budget checks. The clients here are raw
 * sockets that stream a body the way a real uploader does and count what they managed to write; no test sends
 * more than about 100 MiB.
 */
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimits } from '../../server/src/http/body.js';
import { expectDocumented, raw } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const MiB = 1024 * 1024;
const syncPath = '/api/v1/respondents/sync';
const syncLimit = bodyLimits[syncPath];

let t: TestService;
let key: string;
beforeAll(async () => {
  t = await startTestService({ authFailuresPerMinute: 100_000 });
  const tenant = await t.createTenant();
  await t.db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: 100_000, rate_limit_per_day: 1_000_000 })
    .where('id', '=', tenant.organizationId)
    .execute();
  key = tenant.liveKey;
});
afterAll(async () => {
  await t?.close();
});

interface ErrorEnvelope {
  error?: { code: string; status: number; message: string; details?: Array<{ code: string }> };
  meta?: { requestId: string };
}

interface Outcome {
  status?: number;
  headers: Record<string, string>;
  text: string;
  body?: ErrorEnvelope;
  /** Body bytes the client had written when the first byte of the answer arrived. */
  writtenAtAnswer?: number;
  /** Body bytes the client wrote in all. */
  written: number;
  /** Why the exchange ended without a complete answer (reset, close, timeout). */
  failure?: string;
  /** How the connection ended when the client did not end it after the answer (reset, close, timeout). */
  ended?: string;
}

interface Upload {
  method?: string;
  path: string;
  headers: Record<string, string>;
  /** Content-Length to declare; undefined sends the body chunked. */
  declared?: number;
  /** Body bytes to write at most. */
  send: number;
  /**
   * Body bytes the client still writes after the answer started arriving, before it notices and reads it: 0
   * for a client that watches the connection while it sends, more for one that notices between two pieces of its
   * input, Infinity for one that sends everything before it reads. A send that fails before the client noticed
   * is fatal, as in most HTTP clients.
   */
  noticeAfter: number;
  /** How long to wait for a complete answer after the client stopped writing. */
  waitMs?: number;
  /** Keep writing after the answer, until the server closes the connection or `send` is reached. */
  ignoreAnswer?: boolean;
  /** The body to send (spaces when not given). */
  body?: Buffer;
}

/**
 * One request over a plain TCP socket: the head, then the body in 64 KiB pieces as fast as the socket takes
 * them (backpressure respected), while the answer is read and parsed as it arrives. Resolves with what the
 * client could read; never rejects.
 */
function upload(base: string, request: Upload): Promise<Outcome> {
  const { hostname, port } = new URL(base);
  const piece = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve) => {
    const outcome: Outcome = { headers: {}, text: '', written: 0 };
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let bodyStart = -1;
    let length = -1;
    let settled = false;
    let closed = false;
    let sent = false;
    let complete = false;
    let waitTimer: NodeJS.Timeout | undefined;
    const overall = setTimeout(
      () => settle(`no complete answer within 20 s (${outcome.written} bytes written)`),
      20_000,
    );

    function settle(failure?: string): void {
      if (settled) return;
      settled = true;
      clearTimeout(overall);
      clearTimeout(waitTimer);
      outcome.ended = failure;
      // A client that reads only after sending everything never sees an answer when its sending fails.
      if (failure && (!outcome.body || (!request.ignoreAnswer && !sent))) outcome.failure = failure;
      socket.destroy();
      resolve(outcome);
    }

    socket.on('data', (data: Buffer) => {
      outcome.writtenAtAnswer ??= outcome.written;
      received = Buffer.concat([received, data]);
      if (bodyStart < 0) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
        outcome.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]);
        for (const line of lines) {
          const colon = line.indexOf(':');
          outcome.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        length = Number(outcome.headers['content-length'] ?? -1);
        bodyStart = end + 4;
      }
      if (length >= 0 && received.length - bodyStart >= length) {
        outcome.text = received.subarray(bodyStart, bodyStart + length).toString('utf8');
        try {
          outcome.body = JSON.parse(outcome.text) as ErrorEnvelope;
        } catch {
          outcome.failure = 'the answer is not JSON';
        }
        complete = true;
        if (sent && !request.ignoreAnswer) settle();
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      settle(`${error.code ?? error.message} after ${outcome.written} bytes written`),
    );
    socket.on('close', () => {
      closed = true;
      settle(`closed before a complete answer (${outcome.written} bytes written)`);
    });

    socket.on('connect', () => {
      const headers = {
        host: `${hostname}:${port}`,
        ...request.headers,
        ...(request.declared === undefined
          ? { 'transfer-encoding': 'chunked' }
          : { 'content-length': String(request.declared) }),
      };
      const head = `${request.method ?? 'POST'} ${request.path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`;
      socket.write(head);
      void (async () => {
        while (
          !settled &&
          !closed &&
          outcome.written < request.send &&
          !(outcome.writtenAtAnswer !== undefined && outcome.written - outcome.writtenAtAnswer >= request.noticeAfter)
        ) {
          const size = Math.min(piece.length, request.send - outcome.written);
          const data = request.body
            ? request.body.subarray(outcome.written, outcome.written + size)
            : size === piece.length
              ? piece
              : piece.subarray(0, size);
          outcome.written += size;
          const accepted =
            request.declared === undefined
              ? socket.write(Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), data, Buffer.from('\r\n')]))
              : socket.write(data);
          if (!accepted) await drained(socket);
        }
        sent = true;
        if (complete && !request.ignoreAnswer) return settle();
        // Stopped writing (answer started, everything sent, or the bound reached): wait for the answer.
        if (!settled)
          waitTimer = setTimeout(
            () =>
              settle(
                `no complete answer ${request.waitMs ?? 5_000} ms after the client stopped writing (${outcome.written} bytes written)`,
              ),
            request.waitMs ?? 5_000,
          );
      })();
    });
  });
}

/** Resolves when the socket can take more, or is gone. */
function drained(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/** The outcome as `expectDocumented` wants it, with a readable message when there is no answer. */
function answered(outcome: Outcome) {
  expect(outcome.failure, `the client could not read the answer: ${outcome.failure}`).toBeUndefined();
  expect(outcome.status).toBeDefined();
  return { status: outcome.status!, headers: outcome.headers, text: outcome.text, body: outcome.body };
}

describe('a body over the limit is refused with a 413 the client reads', () => {
  it('a declared Content-Length of 1 GB gets 413 from the headers, while the client is still sending', async () => {
    const outcome = await upload(t.url, {
      path: syncPath,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      declared: 1024 * MiB,
      send: 64 * MiB,
      noticeAfter: MiB,
    });
    const answer = answered(outcome);
    expect(answer.status).toBe(413);
    expect(outcome.body?.error?.code).toBe('payload_too_large');
    expect(outcome.headers.connection).toBe('close');
    expectDocumented(syncPath, 'POST', answer);
    // Answered from the headers: what the client wrote before the answer is what the sockets buffer, not the body.
    expect(outcome.writtenAtAnswer!).toBeLessThan(16 * MiB);
  });

  it('a chunked body is counted as it arrives and refused as soon as it passes the 64 MiB limit', async () => {
    const margin = 16 * MiB;
    const outcome = await upload(t.url, {
      path: syncPath,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      send: syncLimit + 2 * margin,
      noticeAfter: MiB,
      waitMs: 3_000,
    });
    const answer = answered(outcome);
    expect(answer.status).toBe(413);
    expect(outcome.body?.error?.code).toBe('payload_too_large');
    expect(outcome.headers.connection).toBe('close');
    expectDocumented(syncPath, 'POST', answer);
    // The limit is 64 MiB: the answer came before the client had written more than that and what sockets buffer.
    expect(outcome.writtenAtAnswer!).toBeGreaterThan(syncLimit);
    expect(outcome.writtenAtAnswer!).toBeLessThan(syncLimit + margin);
  });

  it('a compressed body is held to the limit as decoded: a small gzip body is read, one that inflates past the limit is 413', async () => {
    const survey = gzipSync(
      JSON.stringify({
        title: 'Compressed',
        questions: [{ type: 'nps', text: 'How likely are you to recommend us?' }],
      }),
    );
    const created = await raw(t.url, 'POST', '/api/v1/surveys', {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: survey,
    });
    expect(created.status, created.text).toBe(201);
    // 1 MiB of JSON whitespace compresses to about 1 KiB: the wire is far below the 64 KiB limit, the JSON is not.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"title":'), Buffer.alloc(MiB, 0x20), Buffer.from('"x"}')]));
    const inflated = await upload(t.url, {
      path: '/api/v1/surveys',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      declared: bomb.length,
      send: bomb.length,
      noticeAfter: Infinity,
      body: bomb,
    });
    expect(answered(inflated).status).toBe(413);
    expectDocumented('/api/v1/surveys', 'POST', answered(inflated));
    const unknown = await raw(t.url, 'POST', '/api/v1/surveys', {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'compress' },
      body: '{}',
    });
    expect(unknown.status).toBe(415);
    expectDocumented('/api/v1/surveys', 'POST', unknown);
  });

  it('a client that sends its whole body before reading (1 MiB to a 64 KiB route) still reads its 413', async () => {
    const outcome = await upload(t.url, {
      path: '/api/v1/surveys',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      declared: MiB,
      send: MiB,
      noticeAfter: Infinity,
    });
    const answer = answered(outcome);
    expect(answer.status).toBe(413);
    expectDocumented('/api/v1/surveys', 'POST', answer);
  });

  it('does not read a refused body without bound: a client that keeps sending after the answer is cut off', async () => {
    const started = Date.now();
    const outcome = await upload(t.url, {
      path: syncPath,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      declared: 1024 * MiB,
      send: 96 * MiB,
      noticeAfter: Infinity,
      ignoreAnswer: true,
      waitMs: 3_000,
    });
    // The server closed the connection (a reset or a close) long before the client could write 96 MiB of the
    // declared 1 GB, and within seconds.
    expect(outcome.ended).toMatch(/ECONNRESET|EPIPE|closed/);
    expect(outcome.written).toBeLessThan(64 * MiB);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('an unauthenticated upload gets a 401 the client reads', () => {
  it('50 concurrent unauthenticated 5 MB uploads all read 401 unauthenticated', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () =>
        upload(t.url, {
          path: syncPath,
          headers: { 'content-type': 'application/json' },
          declared: 5_000_000,
          send: 5_000_000,
          noticeAfter: MiB,
        }),
      ),
    );
    const statuses = outcomes.map((outcome) => outcome.status ?? outcome.failure);
    expect(statuses, JSON.stringify(statuses)).toEqual(Array.from({ length: 50 }, () => 401));
    for (const outcome of outcomes) {
      expect(outcome.body?.error?.code).toBe('unauthenticated');
      expectDocumented(syncPath, 'POST', answered(outcome));
    }
  });

  it('clients that send their whole 5 MB body before reading read their 401 too', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () =>
        upload(t.url, {
          path: syncPath,
          headers: { 'content-type': 'application/json' },
          declared: 5_000_000,
          send: 5_000_000,
          noticeAfter: Infinity,
        }),
      ),
    );
    for (const outcome of outcomes) {
      expect(answered(outcome).status).toBe(401);
      expect(outcome.written).toBe(5_000_000);
      expect(outcome.body?.error?.code).toBe('unauthenticated');
    }
  });
});

describe('every spelling of a path meets the same key and budget', () => {
  it('a spent minute is 429 for a case-variant path, as for the canonical spelling', async () => {
    const tenant = await t.createTenant();
    await t.db
      .updateTable('organizations')
      .set({ rate_limit_per_minute: 3, rate_limit_per_day: null })
      .where('id', '=', tenant.organizationId)
      .execute();
    const auth = { authorization: `Bearer ${tenant.liveKey}` };
    // With budget left, a spelling no operation has is simply not found.
    expect((await raw(t.url, 'GET', '/API/V1/Surveys', { headers: auth })).status).toBe(404);
    for (let i = 0; i < 3; i++) await raw(t.url, 'GET', '/api/v1/me', { headers: auth });

    const canonical = await raw(t.url, 'GET', '/api/v1/surveys', { headers: auth });
    expect(canonical.status).toBe(429);
    expectDocumented('/api/v1/surveys', 'GET', canonical);
    for (const [method, path] of [
      ['GET', '/API/V1/Surveys'],
      ['GET', '/api/v1/Surveys'],
      ['GET', '/api/V1/surveys'],
      ['GET', '/api/v1/surveys/'],
      ['DELETE', '/api/v1/me'],
    ] as const) {
      const variant = await raw(t.url, method, path, { headers: auth });
      expect(variant.status, `${method} ${path} → ${variant.status} ${variant.text.slice(0, 200)}`).toBe(429);
      expect((variant.body as ErrorEnvelope).error?.code).toBe('rate_limited');
      expect((variant.body as ErrorEnvelope).error?.details?.[0]?.code).toBe('minute');
      expect(Number(variant.headers['retry-after'])).toBeGreaterThan(0);
      // The same refusal as the canonical spelling's, in the same envelope.
      expectDocumented('/api/v1/surveys', 'GET', variant);
    }
  });

  it('a case-variant path with a key that is not valid is 401, as for the canonical spelling; without a key, 404', async () => {
    const bad = { authorization: `Bearer svc_live_${'0'.repeat(64)}` };
    for (const path of ['/api/v1/surveys', '/API/V1/Surveys']) {
      const answer = await raw(t.url, 'GET', path, { headers: bad });
      expect(answer.status, path).toBe(401);
      expectDocumented('/api/v1/surveys', 'GET', answer);
    }
    expect((await raw(t.url, 'GET', '/API/V1/Surveys')).status).toBe(404);
  });
});
