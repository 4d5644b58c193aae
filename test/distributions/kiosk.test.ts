/**
 * Kiosk distributions through real HTTP: codes on the recipients (and only there), the CSV to print them, the page
 * `/k` (form, 303 to the answer page, wrong and malformed codes, a spent code, the limits on wrong codes), people
 * without e-mail included and never mailed, codes kept apart when two collide, and the SQL that computes the stored
 * hashes agreeing with the code the listing shows.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  accessCodeHash,
  CODE_ALPHABET,
  formatCode,
  parseCode,
} from '../../server/src/modules/distributions/access-codes.js';
import { kioskLimits, openByCode } from '../../server/src/modules/distributions/kiosk.js';
import { separateAccessCodes } from '../../server/src/modules/distributions/repository.js';
import { linkKeyOf } from '../../server/src/modules/distributions/tokens.js';
import type { RespondentInput } from '../../server/src/modules/respondents/records.js';
import type { TestService } from '../helpers/service.js';
import { validForm } from '../helpers/surveys.js';
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

type Recipient = Awaited<ReturnType<typeof allRecipients>>[number];

const CODE_PATTERN = /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;

/** A person without an e-mail address (frontline staff). */
const withoutEmail: RespondentInput = {
  externalId: 'F-0001',
  firstName: 'Rosa',
  lastName: 'Parks',
  department: 'Assembly',
  location: 'Plant 11',
};

let t: TestService;
let smtp: TestSmtp;
let live: Client;
let organizationId: string;

beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
  ({ live, organizationId } = await tenant(t));
  await insertPeople(t, organizationId, [...people(4, 'K'), withoutEmail]);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});
// Every request of this file comes from 127.0.0.1: each test starts with that address's budget untouched.
beforeEach(async () => {
  await t.db.deleteFrom('rate_limits').where('key', 'like', 'kiosk:%').execute();
});

async function distribute(surveyId: string, method: 'kiosk' | 'link' | 'email') {
  const d = await live.unwrap(
    live.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: { method } },
    }),
  );
  return waitForStatus(live, surveyId, d.id, ['sent']);
}

const postCode = (code: string, headers: Record<string, string> = {}) =>
  fetch(`${t.url}/k`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ code }).toString(),
    redirect: 'manual',
  });

/** A well-formed code that opens nothing: the distribution's prefix, other secret characters. */
function wrongCode(code: string, n: number): string {
  const secret = Array.from({ length: 8 }, (_, i) => CODE_ALPHABET[(n * 7 + i * 3) % 32]).join('');
  const candidate = formatCode(code.replaceAll('-', '').slice(0, 4) + secret);
  return candidate === code ? wrongCode(code, n + 1) : candidate;
}

const pathOf = (link: string) => new URL(link).pathname;

describe('a kiosk distribution', () => {
  let surveyId: string;
  let distributionId: string;
  let recipients: Recipient[];
  beforeAll(async () => {
    surveyId = await activeSurvey(live);
    const d = await distribute(surveyId, 'kiosk');
    expect(d).toMatchObject({ method: 'kiosk', matchedCount: 5, sentCount: 5, subject: null });
    distributionId = d.id;
    recipients = await allRecipients(live, surveyId, distributionId);
  });

  it('gives every recipient, the one without e-mail too, a code of its own, and mails nobody', async () => {
    expect(recipients.map((r) => r.respondentExternalId)).toEqual(['F-0001', 'K-0000', 'K-0001', 'K-0002', 'K-0003']);
    for (const r of recipients) {
      expect(r.accessCode).toMatch(CODE_PATTERN);
      expect(r.status).toBe('sent');
    }
    expect(recipients[0]).toMatchObject({ email: null, snapshot: { firstName: 'Rosa', lastName: 'Parks' } });
    expect(new Set(recipients.map((r) => r.accessCode)).size).toBe(5);
    // One prefix per distribution: the first group names it.
    expect(new Set(recipients.map((r) => r.accessCode!.slice(0, 4))).size).toBe(1);
    // The same codes every time they are listed (derived, not stored).
    const again = await allRecipients(live, surveyId, distributionId);
    expect(again.map((r) => r.accessCode)).toEqual(recipients.map((r) => r.accessCode));
    await smtp.settled();
    expect(smtp.received).toEqual([]);
  });

  it('stores only the keyed hash of each code, the one PostgreSQL computed being the one a typed code gives', async () => {
    const rows = await t.db
      .selectFrom('distribution_recipients')
      .select(['external_id', 'access_code_hash', 'access_code_round'])
      .where('distribution_id', '=', distributionId)
      .orderBy('external_id')
      .execute();
    const key = await linkKeyOf(t.db, t.service.deps.config.linkSecret);
    for (const [i, row] of rows.entries()) {
      const parsed = parseCode(recipients[i]!.accessCode!)!;
      expect(row.access_code_round).toBe(0);
      expect(row.access_code_hash!.equals(accessCodeHash(key, distributionId, parsed.secret))).toBe(true);
    }
    const [stored] = await t.db
      .selectFrom('distributions')
      .select('kiosk_prefix')
      .where('id', '=', distributionId)
      .execute();
    expect(stored!.kiosk_prefix).toBe(recipients[0]!.accessCode!.slice(0, 4));
  });

  it('shows other methods no code', async () => {
    const link = await distribute(await activeSurvey(live), 'link');
    const listed = await allRecipients(live, link.surveyId, link.id);
    expect(listed).toHaveLength(5);
    expect(listed.every((r) => r.accessCode === null)).toBe(true);
  });

  it('offers the codes with names as a CSV to print', async () => {
    // Without a key: 401 in the envelope, as every API operation.
    const anonymous = await fetch(`${t.url}/api/v1/surveys/${surveyId}/distributions/${distributionId}/recipients.csv`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: 'unauthenticated' } });

    const { data, response: ok } = await live.GET(
      '/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients.csv',
      { params: { path: { surveyId, distributionId } }, parseAs: 'arrayBuffer' },
    );
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(ok.headers.get('content-disposition')).toBe(`attachment; filename="recipients-${distributionId}.csv"`);
    // Read as bytes: a text decoder would drop the byte order mark.
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(data as unknown as ArrayBuffer);
    expect(text.startsWith('\ufeff')).toBe(true);
    const lines = text.slice(1).split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines[0]).toBe(
      'respondentExternalId,firstName,lastName,department,location,jobTitle,email,status,accessCode,kioskPage,link,qrCode',
    );
    expect(lines.slice(1)).toEqual(
      recipients.map((r) =>
        [
          r.respondentExternalId,
          r.snapshot.firstName,
          r.snapshot.lastName,
          r.snapshot.department,
          r.snapshot.location,
          '',
          r.email ?? '',
          'sent',
          r.accessCode,
          `${t.url}/k`,
          r.link,
          `${r.link}/qr.svg`,
        ].join(','),
      ),
    );
    // By status: nobody has answered yet.
    const none = await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients.csv', {
      params: { path: { surveyId, distributionId }, query: { status: 'responded' } },
      parseAs: 'text',
    });
    expect((none.data as unknown as string).split('\r\n')).toHaveLength(2);
    // Another survey's distribution, and a malformed id: 404 in the envelope.
    const other = await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients.csv', {
      params: { path: { surveyId: await activeSurvey(live), distributionId } },
      parseAs: 'text',
    });
    expect(other.response.status).toBe(404);
    expect(other.error).toMatchObject({ error: { code: 'not_found' } });
  });

  it('shows the form at /k, plain and under the answer page’s headers', async () => {
    const page = await fetch(`${t.url}/k`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/k" novalidate>');
    expect(html).toContain('<label for="code"><strong>Access code</strong></label>');
    expect(html).toMatch(
      /<input type="text" name="code" id="code" value=""[^>]* autocomplete="off"[^>]* aria-describedby="code-hint"/,
    );
    expect(html).not.toContain('<script');
    const answerPage = await fetch(recipients[1]!.link);
    for (const header of ['content-security-policy', 'x-frame-options', 'cache-control', 'referrer-policy']) {
      expect(page.headers.get(header), header).toBe(answerPage.headers.get(header));
    }
    // The browser's language when the page has words for it.
    const german = await fetch(`${t.url}/k`, { headers: { 'accept-language': 'de-CH, en;q=0.5' } });
    expect(await german.text()).toContain('<html lang="de" dir="ltr">');
  });

  it('sends a typed code on to its person’s answer page, however it is spelled', async () => {
    const person = recipients[1]!;
    const code = person.accessCode!;
    const spellings = [
      code,
      code.toLowerCase(),
      code.replaceAll('-', ''),
      ` ${code.replaceAll('-', ' ')} `,
      code.replaceAll('-', '\u2013'),
      code.replaceAll('0', 'o').replaceAll('1', 'l'),
    ];
    for (const typed of spellings) {
      const response = await postCode(typed);
      expect(response.status, typed).toBe(303);
      expect(response.headers.get('location')).toBe(pathOf(person.link));
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    }
    const page = await fetch(`${t.url}${pathOf(person.link)}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Q4 engagement pulse</h1>');
    // Right codes spend nothing of the address's budget.
    const [counted] = await t.db.selectFrom('rate_limits').select('points').where('key', 'like', 'kiosk:%').execute();
    expect(counted?.points ?? 0).toBe(0);
  });

  it('opens the answer page of the person without e-mail', async () => {
    const person = recipients[0]!;
    expect(person.email).toBeNull();
    const response = await postCode(person.accessCode!);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(pathOf(person.link));
  });

  it('refuses a wrong code and a malformed one with the form again, the problem tied to the field', async () => {
    const wrong = await postCode(wrongCode(recipients[2]!.accessCode!, 1));
    expect(wrong.status).toBe(400);
    const html = await wrong.text();
    expect(html).toContain('<title>Check your access code</title>');
    expect(html).toContain('<p class="error" id="code-error" role="alert">This code was not found.');
    expect(html).toContain('aria-describedby="code-hint code-error" aria-invalid="true"');
    // An unknown prefix reads exactly like a wrong secret (no enumeration of distributions).
    const unknownPrefix = await postCode('ZZZZ-ZZZZ-ZZZZ');
    expect(unknownPrefix.status).toBe(400);
    expect(await unknownPrefix.text()).toBe(html.replace(wrongCode(recipients[2]!.accessCode!, 1), 'ZZZZ-ZZZZ-ZZZZ'));

    const malformed = await postCode('K7QM-4XRT');
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('An access code has 12 letters and digits');
    const empty = await postCode('   ');
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('Enter your access code.');
    // Neither of those could be right, so neither was counted.
    const [counted] = await t.db
      .selectFrom('rate_limits')
      .select('points')
      .where('key', '=', 'kiosk:address:127.0.0.1')
      .execute();
    expect(counted?.points).toBe(2);
  });

  it('answers 429 to the 11th try in a minute from one address after 10 wrong codes, right code or not', async () => {
    const right = recipients[3]!;
    for (let n = 1; n <= kioskLimits.perAddressPerMinute; n++) {
      expect((await postCode(wrongCode(right.accessCode!, n))).status, `try ${n}`).toBe(400);
    }
    for (const typed of [wrongCode(right.accessCode!, 99), right.accessCode!]) {
      const refused = await postCode(typed);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const html = await refused.text();
      expect(html).toContain('<h1>Too many tries</h1>');
      expect(html).toContain('<a href="/k">Enter a code</a>');
    }
  });

  it('limits wrong codes per distribution across addresses, without blocking other distributions', async () => {
    const config = t.service.deps.config;
    const code = recipients[4]!.accessCode!;
    for (let n = 1; n <= kioskLimits.perDistributionPerMinute; n++) {
      expect((await openByCode(t.db, config, wrongCode(code, n), `198.51.100.${n}`)).kind).toBe('wrong');
    }
    // A new address, even with a right code of this distribution, waits for the minute to end.
    expect(await openByCode(t.db, config, code, '203.0.113.7')).toMatchObject({ kind: 'throttled' });
    // Another distribution's codes are not affected.
    const other = await distribute(await activeSurvey(live), 'kiosk');
    const [first] = await allRecipients(live, other.surveyId, other.id);
    expect(await openByCode(t.db, config, first!.accessCode!, '203.0.113.7')).toMatchObject({ kind: 'open' });
  });

  it('is spent once its answer is stored: /k then says so', async () => {
    const person = recipients[2]!;
    const opened = await postCode(person.accessCode!);
    expect(opened.status).toBe(303);
    const answered = await fetch(`${t.url}${opened.headers.get('location')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(validForm).toString(),
    });
    expect(answered.status).toBe(200);
    const spent = await postCode(person.accessCode!);
    expect(spent.status).toBe(410);
    const html = await spent.text();
    expect(html).toContain('<h1>This code has been used</h1>');
    expect(html).toContain('<a href="/k">Enter a code</a>');
    const [listed] = (await allRecipients(live, surveyId, distributionId)).filter(
      (r) => r.respondentExternalId === person.respondentExternalId,
    );
    expect(listed).toMatchObject({ status: 'responded', accessCode: person.accessCode });
  });

  it('leads an expired code to the answer page, which says the link has expired', async () => {
    await t.db
      .updateTable('distributions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', distributionId)
      .execute();
    try {
      const opened = await postCode(recipients[4]!.accessCode!);
      expect(opened.status).toBe(303);
      const page = await fetch(`${t.url}${opened.headers.get('location')}`);
      expect(page.status).toBe(410);
      expect(await page.text()).toContain('This link has expired');
    } finally {
      await t.db
        .updateTable('distributions')
        .set({ expires_at: new Date(Date.now() + 86_400_000) })
        .where('id', '=', distributionId)
        .execute();
    }
  });
});

describe('codes that collide', () => {
  it('are kept apart: the later recipient takes the next derivation, and both codes open their own page', async () => {
    const surveyId = await activeSurvey(live);
    const d = await distribute(surveyId, 'kiosk');
    const [a, b] = await allRecipients(live, surveyId, d.id);
    // Make b's stored hash a's, as two equal 40-bit draws would.
    const [aRow] = await t.db
      .selectFrom('distribution_recipients')
      .select('access_code_hash')
      .where('distribution_id', '=', d.id)
      .where('external_id', '=', a!.respondentExternalId)
      .execute();
    await t.db
      .updateTable('distribution_recipients')
      .set({ access_code_hash: aRow!.access_code_hash })
      .where('distribution_id', '=', d.id)
      .where('external_id', '=', b!.respondentExternalId)
      .execute();
    const key = await linkKeyOf(t.db, t.service.deps.config.linkSecret);
    expect(await separateAccessCodes(t.db, { organizationId, environment: 'LIVE' }, d.id, key)).toBe(1);
    expect(await separateAccessCodes(t.db, { organizationId, environment: 'LIVE' }, d.id, key)).toBe(0);
    const [a2, b2] = await allRecipients(live, surveyId, d.id);
    expect(a2!.accessCode).toBe(a!.accessCode);
    expect(b2!.accessCode).not.toBe(b!.accessCode);
    expect(b2!.accessCode).toMatch(CODE_PATTERN);
    for (const person of [a2!, b2!]) {
      const response = await postCode(person.accessCode!);
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe(pathOf(person.link));
    }
  });
});

describe('the CSV of the recipients', () => {
  it('writes a text a spreadsheet would run as a formula with a leading apostrophe, and quotes separators', async () => {
    await insertPeople(t, organizationId, [
      {
        externalId: 'X-0001',
        firstName: '=HYPERLINK("https://attacker.example")',
        lastName: 'Smith; Jr',
        department: 'Formula',
      },
    ]);
    const surveyId = await activeSurvey(live);
    const sent = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: {
          targeting: { filters: [{ field: 'department', operator: 'equals', value: 'Formula' }] },
          distribution: { method: 'link' },
        },
      }),
    );
    await waitForStatus(live, surveyId, sent.id, ['sent']);
    const { data } = await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients.csv', {
      params: { path: { surveyId, distributionId: sent.id } },
      parseAs: 'text',
    });
    const [, row] = (data as unknown as string).split('\r\n');
    expect(row).toMatch(/^X-0001,"'=HYPERLINK\(""https:\/\/attacker\.example""\)","Smith; Jr",Formula,,,,sent,,,http/);
  });
});

describe('reading a typed code', () => {
  it('ignores case, white space and dashes, reads O as 0 and I, L as 1, and refuses anything else', () => {
    const code = parseCode('K7QM-4XRT-9PZ3')!;
    expect(code.prefix).toBe('K7QM');
    expect(code.secret).toHaveLength(5);
    for (const typed of ['k7qm4xrt9pz3', ' K7QM 4XRT 9PZ3 ', 'K7QM—4XRT—9PZ3']) expect(parseCode(typed)).toEqual(code);
    expect(parseCode('10O0-0000-0000')).toEqual(parseCode('1000-0000-0000'));
    expect(parseCode('IL00-0000-0000')).toEqual(parseCode('1100-0000-0000'));
    for (const typed of ['', 'K7QM-4XRT-9PZ', 'K7QM-4XRT-9PZ33', 'K7QM-4XRT-9PZU', 'K7QM-4XRT-9PZ!']) {
      expect(parseCode(typed), typed).toBeUndefined();
    }
  });

  it('prints every 40-bit secret as its own 8 characters', () => {
    const key = { key: Buffer.alloc(32, 7) };
    const seen = new Set<string>();
    for (const secret of [Buffer.alloc(5, 0), Buffer.alloc(5, 255), Buffer.from([1, 2, 3, 4, 5])]) {
      const characters = formatCode(
        `AAAA${[...secret]
          .map((b) => b.toString(2).padStart(8, '0'))
          .join('')
          .match(/.{5}/g)!
          .map((bits) => CODE_ALPHABET[parseInt(bits, 2)])
          .join('')}`,
      );
      const parsed = parseCode(characters)!;
      expect(parsed.secret.equals(secret)).toBe(true);
      seen.add(accessCodeHash(key, 'dst_x', parsed.secret).toString('hex'));
    }
    expect(seen.size).toBe(3);
  });
});
