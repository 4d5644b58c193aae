/**
 * A fake OpenAI-compatible chat-completions server on 127.0.0.1 (node:http). It records every request it
 * receives (so tests can check what left the service) and answers with a behaviour the test chooses: good
 * output, invalid JSON, output that breaks the schema, 429 with Retry-After, 500, or a hang.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    response_format?: { type: string; json_schema?: { name: string; schema: unknown } };
  };
  raw: string;
}

export type Reply =
  | { kind: 'content'; content: string }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  | { kind: 'hang' };

export type Behaviour = (request: ReceivedRequest, index: number) => Reply;

export interface FakeOpenAi {
  /** Base URL including `/v1`. */
  url: string;
  received: ReceivedRequest[];
  behave(behaviour: Behaviour): void;
  close(): Promise<void>;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const received: ReceivedRequest[] = [];
  let behaviour: Behaviour = () => ({ kind: 'status', status: 500 });
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        at: Date.now(),
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(raw || '{}') as ReceivedRequest['body'],
        raw,
      };
      received.push(request);
      const reply =
        req.url === '/v1/chat/completions'
          ? behaviour(request, received.length - 1)
          : { kind: 'status' as const, status: 404 };
      if (reply.kind === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (reply.kind === 'status') {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body ?? JSON.stringify({ error: { message: 'fake failure' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          model: request.body.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content } }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    behave(next) {
      behaviour = next;
      received.length = 0;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The numbered comments of an analysis request, as the service sent them: `[n] (questionId) text`. */
export function commentsOf(request: ReceivedRequest): Array<{ n: number; text: string }> {
  const user = request.body.messages.find((m) => m.role === 'user')?.content ?? '';
  return [...user.matchAll(/^\[(\d+)\] \([^)]*\) (.*)$/gm)].map((m) => ({ n: Number(m[1]), text: m[2]! }));
}

/** A plausible analysis answer: sentiment from a few words, one theme per listed keyword, quotes copied. */
export function goodAnalysis(
  request: ReceivedRequest,
  themes: Array<{ name: string; word: RegExp; extraQuotes?: string[] }>,
): string {
  const comments = commentsOf(request);
  return JSON.stringify({
    language: 'en',
    sentiments: comments.map((c) => ({
      comment: c.n,
      score: /love|great|wonderful|thank|helps/i.test(c.text) ? 0.7 : -0.6,
    })),
    themes: themes.map((theme) => {
      const members = comments.filter((c) => theme.word.test(c.text));
      return {
        name: theme.name,
        keywords: [theme.name],
        comments: members.map((c) => c.n),
        quotes: [...members.slice(-2).map((c) => c.text.slice(0, 40)), ...(theme.extraQuotes ?? [])].slice(0, 3),
        recommendation: `Act on ${theme.name}.`,
      };
    }),
    summary: `People talk about ${themes.map((t) => t.name).join(' and ')}.`,
  });
}

/** A valid generated survey of `n` questions in the provider's flat shape. */
export function goodSurvey(n: number, overrides: Record<string, unknown> = {}): string {
  const questions = Array.from({ length: n }, (_, i) =>
    i === 0
      ? {
          type: 'nps',
          text: 'How likely are you to recommend working here?',
          required: true,
          min: null,
          max: null,
          minLabel: null,
          maxLabel: null,
          choices: [],
        }
      : i === n - 1
        ? {
            type: 'text',
            text: 'Anything else?',
            required: false,
            min: null,
            max: null,
            minLabel: null,
            maxLabel: null,
            choices: [],
          }
        : {
            type: 'rating',
            text: `Statement ${i}`,
            required: true,
            min: 1,
            max: 5,
            minLabel: 'Disagree',
            maxLabel: 'Agree',
            choices: [],
          },
  );
  return JSON.stringify({ title: 'Engagement pulse', description: 'A short pulse.', questions, ...overrides });
}
