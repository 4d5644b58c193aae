/**
 * One HTTP attempt: a signed POST with a hard deadline, no redirects, a capped read of the answer, and the
 * SSRF check on the address actually connected to (see address-guard.ts). `node:http` rather than fetch:
 * it takes a `lookup` per request (fetch has no hook between DNS and connect) and never follows redirects.
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalRefusal } from './address-guard.js';

/** At most this much of an answer is read; the first `excerptBytes` of it are kept. */
export const maxResponseBytes = 4096;
export const excerptBytes = 1024;

export interface AttemptResult {
  /** The HTTP status, when an answer came. */
  status?: number;
  retryAfter?: string;
  location?: string;
  excerpt?: string;
  /** Why no usable answer came (timeout, network error, refused address). */
  error?: string;
  latencyMs: number;
}

export interface SendOptions {
  timeoutMs: number;
  allowLoopback: boolean;
}

// Keep-alive: a burst of deliveries to one endpoint reuses connections. Sockets were checked when they connected.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, keepAliveMsecs: 5_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, keepAliveMsecs: 5_000 }),
};

export function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return Promise.resolve({ error: 'invalid URL', latencyMs: 0 });
  }
  const refusal = literalRefusal(url, options.allowLoopback);
  if (refusal) return Promise.resolve({ error: refusal, latencyMs: 0 });
  const secure = url.protocol === 'https:';
  if (!secure && !(url.protocol === 'http:' && options.allowLoopback))
    return Promise.resolve({ error: 'URL must use https', latencyMs: 0 });

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      lookup: guardedLookup(options.allowLoopback) as never,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'SurveyService-Webhooks/1',
      },
    });
    // One deadline for connect, send and answer together, as the contract promises.
    const deadline = setTimeout(() => {
      request.destroy();
      finish({ error: `timeout after ${options.timeoutMs} ms`, latencyMs: elapsed() });
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      const reason =
        error.name === 'AddressRefused' ? error.message : `${error.code ?? 'network error'}: ${error.message}`;
      finish({ error: reason.slice(0, 1000), latencyMs: elapsed() });
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        const bytes = Buffer.concat(chunks).subarray(0, excerptBytes);
        // PostgreSQL text cannot hold NUL.
        const excerpt = bytes.toString('utf8').replaceAll('\u0000', '');
        const header = (name: string) => {
          const value = response.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        finish({
          status: response.statusCode,
          retryAfter: header('retry-after'),
          location: header('location'),
          excerpt,
          latencyMs: elapsed(),
        });
      };
      response.on('data', (chunk: Buffer) => {
        if (read >= maxResponseBytes) return;
        chunks.push(chunk);
        read += chunk.length;
        // Enough read: stop here instead of downloading whatever the endpoint sends.
        if (read >= maxResponseBytes) {
          done();
          response.destroy();
        }
      });
      response.on('end', done);
      response.on('error', done);
      response.on('close', done);
    });
    request.end(body);
  });
}
