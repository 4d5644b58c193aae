/**
 * The answer page as an attacker sees it, over real HTTP: only the canonical spelling of a personal token
 * answers; only an embed distribution's pages can be framed, and only by the origins it lists; a shared embed
 * token takes a bounded number of answers when no cookie is sent; and the embed token never rests in the event
 * log or leaves in a webhook delivery.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedLimits } from '../../server/src/modules/respondent-pages/embed-limits.js';
import type { TestService } from '../helpers/service.js';
import {
  activeSurvey,
  allRecipients,
  insertPeople,
  people,
  startWithSmtp,
  tenant,
  waitForStatus,
  type Client,
} from './fixtures.js';
import type { TestSmtp } from './smtp.js';

let t: TestService;
let smtp: TestSmtp;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const validForm: Array<[string, string]> = [
  ['q_1', '9'],
  ['q_2', '4'],
  ['q_3', 'c_3'],
  ['q_4', 'c_1'],
  ['q_5', 'More focus time'],
];

/** POSTs the answer form from a chosen loopback address (127.0.0.0/8 is all loopback on Linux), with no cookie. */
function postFrom(url: string, localAddress: string): Promise<{ status: number; retryAfter: string | undefined }> {
  const body = new URLSearchParams(validForm).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function distribute(client: Client, surveyId: string, distribution: Record<string, unknown>) {
  const d = await client.unwrap(
    client.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: distribution as never },
    }),
  );
  return waitForStatus(client, surveyId, d.id, ['sent']);
}

const embedUrl = (d: { embedCode: string | null }) => /src="([^"]+)"/.exec(d.embedCode!)![1]!;
const frameAncestors = (response: Response) =>
  /frame-ancestors ([^;]+)/.exec(response.headers.get('content-security-policy') ?? '')?.[1];

describe('personal tokens', () => {
  it('answer only in their canonical spelling (the unused low bits of the last character change nothing else)', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(1, 'C'));
    const surveyId = await activeSurvey(live);
    const d = await distribute(live, surveyId, { method: 'link' });
    const link = (await allRecipients(live, surveyId, d.id))[0]!.link;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(link.at(-1)!);
    // The 43rd character holds 6 bits of which the MAC uses the high 4: four spellings decode alike.
    const spellings = [0, 1, 2, 3].map((low) => link.slice(0, -1) + alphabet[(last & ~3) | low]);
    expect(spellings).toContain(link);
    for (const spelling of spellings) {
      const page = await fetch(spelling);
      expect([spelling === link ? 200 : 404, spelling]).toEqual([page.status, spelling]);
    }
    for (const spelling of spellings.filter((s) => s !== link)) {
      const post = await fetch(spelling, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(validForm).toString(),
      });
      expect(post.status).toBe(404);
    }
    expect(
      await live.unwrap(live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } })),
    ).toEqual([]);
  });
});

describe('framing', () => {
  it('no site may frame a personal page, an unknown token or an unsubscribe page', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(1, 'F'));
    const surveyId = await activeSurvey(live);
    const d = await distribute(live, surveyId, { method: 'email' });
    const link = (await allRecipients(live, surveyId, d.id))[0]!.link;
    for (const url of [link, link.replace('/s/', '/u/'), `${t.url}/s/not-a-token`]) {
      const page = await fetch(url);
      expect([url, frameAncestors(page), page.headers.get('x-frame-options')]).toEqual([url, "'none'", 'DENY']);
    }
  });

  it('an embed is framed only by the origins its distribution lists (none by default)', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(1, 'G'));
    const surveyId = await activeSurvey(live);
    const closed = await distribute(live, surveyId, { method: 'embed' });
    expect(closed.embedOrigins).toEqual([]);
    const closedPage = await fetch(embedUrl(closed));
    expect(closedPage.status).toBe(200);
    expect([frameAncestors(closedPage), closedPage.headers.get('x-frame-options')]).toEqual(["'none'", 'DENY']);

    const origins = ['https://intranet.example.com', 'https://*.portal.example.org:8443', 'http://localhost:5173'];
    const open = await distribute(live, surveyId, { method: 'embed', embedOrigins: origins });
    expect(open.embedOrigins).toEqual(origins);
    const openPage = await fetch(embedUrl(open));
    expect([frameAncestors(openPage), openPage.headers.get('x-frame-options')]).toEqual([origins.join(' '), null]);
    // The personal links of an embed distribution go in an iframe too, so the same origins apply.
    const personal = (await allRecipients(live, surveyId, open.id))[0]!.link;
    expect(frameAncestors(await fetch(personal))).toBe(origins.join(' '));
  });

  it.each([
    [{ method: 'link', embedOrigins: ['https://intranet.example.com'] }, '/body/distribution/embedOrigins'],
    [{ method: 'embed', embedOrigins: ['https://intranet.example.com/path'] }, '/body/distribution/embedOrigins/0'],
    [{ method: 'embed', embedOrigins: ['https://a.example.com; script-src *'] }, '/body/distribution/embedOrigins/0'],
    [{ method: 'embed', embedOrigins: ["'self'"] }, '/body/distribution/embedOrigins/0'],
    [{ method: 'embed', embedOrigins: ['*'] }, '/body/distribution/embedOrigins/0'],
    [{ method: 'embed', embedOrigins: ['HTTPS://INTRANET.EXAMPLE.COM'] }, '/body/distribution/embedOrigins/0'],
    [{ method: 'embed', embedOrigins: ['http://intranet.example.com'] }, '/body/distribution/embedOrigins/0'],
  ])('refuses %j with 400 naming %s', async (distribution, path) => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const { error, response } = await live.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: distribution as never },
    });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ error: { code: 'validation_failed' } });
    expect((error as { error: { details: Array<{ path: string }> } }).error.details.map((d) => d.path)).toContain(path);
  });
});

describe('the shared embed token without a cookie', () => {
  it(`takes ${embedLimits.perAddressPerHour} answers an hour from one address and ${embedLimits.perTokenPerMinute} a minute in all, then 429 with Retry-After`, async () => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const url = embedUrl(await distribute(live, surveyId, { method: 'embed' }));
    const perAddress = embedLimits.perAddressPerHour;
    const addresses = Math.ceil(embedLimits.perTokenPerMinute / perAddress);

    // Each address spends its hour's answers; together they spend the token's minute exactly.
    const statuses: number[] = [];
    for (let a = 0; a < addresses; a += 4) {
      const batch = Array.from(
        { length: Math.min(4, addresses - a) },
        (_, i) => `127.0.${1 + Math.floor((a + i) / 250)}.${1 + ((a + i) % 250)}`,
      );
      const results = await Promise.all(
        batch.map(async (address) => {
          const out: number[] = [];
          for (let n = 0; n < perAddress; n++) out.push((await postFrom(url, address)).status);
          return out;
        }),
      );
      statuses.push(...results.flat());
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(
      Math.min(addresses * perAddress, embedLimits.perTokenPerMinute),
    );

    const sameAddress = await postFrom(url, '127.0.1.1');
    expect(sameAddress.status).toBe(429);
    expect(Number(sameAddress.retryAfter)).toBeGreaterThan(60); // the address's hour
    const freshAddress = await postFrom(url, '127.0.9.9');
    expect(freshAddress.status).toBe(429);
    expect(Number(freshAddress.retryAfter)).toBeLessThanOrEqual(60); // the token's minute

    const counts = await sql<{ count: string }>`select count(*) from responses where survey_id = ${surveyId}`.execute(
      t.db,
    );
    expect(Number(counts.rows[0]!.count)).toBe(embedLimits.perTokenPerMinute);
  }, 120_000);
});

describe('the embed token at rest', () => {
  it('is not in the distribution.sent event, nor in what its webhook deliveries are built from', async () => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const d = await distribute(live, surveyId, { method: 'embed', embedOrigins: ['https://intranet.example.com'] });
    const token = embedUrl(d).split('/s/')[1]!;
    const events = await live.unwrap(live.GET('/api/v1/events', { params: { query: { type: 'distribution.sent' } } }));
    const sent = events.find((e) => (e.data as { id?: string }).id === d.id)!;
    expect(sent.data).toMatchObject({
      id: d.id,
      method: 'embed',
      embedCode: null,
      embedOrigins: ['https://intranet.example.com'],
    });
    const stored = await sql<{
      n: string;
    }>`select count(*) as n from events where data::text like ${`%${token}%`}`.execute(t.db);
    expect(Number(stored.rows[0]!.n)).toBe(0);
    // The distribution itself still shows it, to the key holder.
    expect(
      (
        await live.unwrap(
          live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
            params: { path: { surveyId, distributionId: d.id } },
          }),
        )
      ).embedCode,
    ).toContain(token);
  });
});

/**
 * Streams 256 KiB of a body that never ends to `url` over a raw socket (declared as 1 GiB, or chunked with no last
 * chunk) and returns the answer. Since the body is never complete, any answer at all proves the server refused it
 * from the headers or from the running count, not at the end of the body; a server that waited would time out.
 */
function answerToUnfinishedBody(
  url: string,
  mode: 'declared' | 'chunked',
): Promise<{ status: number; written: number; body: string }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let written = 0;
    let answer = '';
    const piece = Buffer.alloc(16 * 1024, 'a');
    const finish = () => {
      clearTimeout(timer);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), written, body: answer });
      socket.destroy();
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer after ${written} bytes of an unfinished body`));
    }, 10_000);
    socket.on('data', (data) => {
      answer += data.toString('latin1');
      if (answer.includes('</html>')) finish();
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${error.message} after ${written} bytes, answer so far: ${answer.slice(0, 40)}`));
    });
    socket.on('close', finish);
    socket.on('connect', () => {
      const length = mode === 'declared' ? 'content-length: 1073741824' : 'transfer-encoding: chunked';
      socket.write(
        `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/x-www-form-urlencoded\r\n${length}\r\n\r\n`,
      );
      const pump = () => {
        // Four times the 64 KiB limit, then silence: the body stays open until the answer comes.
        while (!answer.includes('</html>') && written < 256 * 1024 && !socket.destroyed) {
          const chunk =
            mode === 'chunked'
              ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
              : piece;
          written += piece.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

describe('answer page bodies', () => {
  it.each(['declared', 'chunked'] as const)(
    'a %s body over 64 KiB is refused with a 413 page the sender reads',
    async (mode) => {
      const { live, organizationId } = await tenant(t);
      await insertPeople(t, organizationId, people(1, mode === 'declared' ? 'D' : 'K'));
      const surveyId = await activeSurvey(live);
      const d = await distribute(live, surveyId, { method: 'link' });
      const link = (await allRecipients(live, surveyId, d.id))[0]!.link;
      const { status, body } = await answerToUnfinishedBody(link, mode);
      expect(status).toBe(413);
      expect(body).toContain('Your answer is too long');
      expect(
        await live.unwrap(live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } })),
      ).toEqual([]);
    },
  );
});
