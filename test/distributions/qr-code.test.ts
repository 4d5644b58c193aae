/**
 * `GET /s/{token}/qr.svg` through real HTTP: a well-formed SVG that is exactly the `qrcode` library's drawing of the
 * personal link (so it encodes that link), with image headers; refused as the answer page is (unknown and malformed
 * tokens 404, an expired or used link 410, a survey not open 409).
 */
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { validForm } from '../helpers/surveys.js';
import { activeSurvey, allRecipients, insertPeople, people, startWithSmtp, tenant, waitForStatus } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

/**
 * Whether `svg` is one well-formed `<svg>` element in the SVG namespace: every tag closed in order, attributes
 * quoted, nothing but the drawing's elements (no script, no reference to anything outside).
 */
function wellFormedSvg(svg: string): boolean {
  if (!/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>/.test(svg) || !svg.trimEnd().endsWith('</svg>'))
    return false;
  const stack: string[] = [];
  let rest = svg.trim();
  while (rest.length > 0) {
    const tag = /^<(\/?)([a-zA-Z]+)((?:\s+[a-zA-Z-:]+="[^"<>]*")*)\s*(\/?)>/.exec(rest);
    if (!tag) return false;
    const [whole, closing, name, , selfClosing] = tag;
    if (!['svg', 'path', 'rect', 'g'].includes(name!)) return false;
    if (closing) {
      if (stack.pop() !== name) return false;
    } else if (!selfClosing) stack.push(name!);
    rest = rest.slice(whole.length).trimStart();
    if (stack.length === 0) return rest.length === 0;
  }
  return false;
}

describe('the QR code of a personal link', () => {
  let t: TestService;
  let smtp: TestSmtp;
  let live: Awaited<ReturnType<typeof tenant>>['live'];
  let surveyId: string;
  let links: string[];
  beforeAll(async () => {
    ({ t, smtp } = await startWithSmtp());
    const made = await tenant(t);
    live = made.live;
    await insertPeople(t, made.organizationId, people(3, 'Q'));
    surveyId = await activeSurvey(live);
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'link' } },
      }),
    );
    await waitForStatus(live, surveyId, d.id, ['sent']);
    links = (await allRecipients(live, surveyId, d.id)).map((r) => r.link);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('is an SVG of exactly that link, made by the qrcode library, for browsers only to keep', async () => {
    const response = await fetch(`${links[0]}/qr.svg`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('private, max-age=3600');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    const svg = await response.text();
    expect(wellFormedSvg(svg)).toBe(true);
    expect(svg).toMatch(/viewBox="0 0 (\d+) \1"/);
    // The drawing of this link and of no other: the same library and options give the same SVG.
    expect(svg).toBe(await QRCode.toString(links[0]!, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 }));
    expect(svg).not.toBe(await QRCode.toString(links[1]!, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 }));
    // Its symbol: version and size as the library lays out the link, with the standard's quiet zone of 4.
    const symbol = QRCode.create(links[0]!, { errorCorrectionLevel: 'M' });
    expect(svg).toContain(`viewBox="0 0 ${symbol.modules.size + 8} ${symbol.modules.size + 8}"`);
  });

  it('is refused like the answer page: unknown or malformed 404, used 410, expired 410, survey not open 409', async () => {
    const token = new URL(links[0]!).pathname.slice('/s/'.length);
    const unknown = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BA' : 'AA'}`;
    for (const [path, status] of [
      [`/s/${unknown}/qr.svg`, 404],
      ['/s/not-a-token/qr.svg', 404],
    ] as const) {
      const response = await fetch(`${t.url}${path}`);
      expect(response.status, path).toBe(status);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await response.text()).toContain('This link is not valid');
    }

    // Used: answered through the page.
    const answered = await fetch(links[1]!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(validForm).toString(),
    });
    expect(answered.status).toBe(200);
    const used = await fetch(`${links[1]}/qr.svg`);
    expect(used.status).toBe(410);
    expect(used.status).toBe((await fetch(links[1]!)).status);

    // Not open: paused.
    await live.unwrap(live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id: surveyId } } }));
    const paused = await fetch(`${links[2]}/qr.svg`);
    expect(paused.status).toBe(409);
    expect(await paused.text()).toContain('This survey is not open');
    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } }));

    // Expired.
    await t.db
      .updateTable('distributions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .execute();
    const expired = await fetch(`${links[2]}/qr.svg`);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('This link has expired');
  });
});
