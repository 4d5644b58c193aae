/**
 * SSRF through IPv6 addresses that carry an IPv4 address: the deprecated IPv4-compatible `::/96`, IPv4-mapped
 * `::ffff:0:0/96`, IPv4-translated `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`
 * and Teredo `2001::/32`. Each is judged by the IPv4 address(es) it carries — at create and at update through
 * real HTTP with a production configuration (no loopback webhooks), and at connect time, where a resolved
 * address goes through the same check. Nothing here connects anywhere but loopback: accepted webhooks are
 * created disabled, and only loopback-carrying addresses are ever dialled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedLookup, refusalOf } from '../../server/src/modules/webhooks/address-guard.js';
import { postWebhook } from '../../server/src/modules/webhooks/sender.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

/** Refused URLs, and a word the refusal must name (the class of the carried IPv4 address, or the range). */
const refused: Array<[string, string]> = [
  // IPv4-compatible (deprecated), in every spelling the URL parser accepts.
  ['https://[::127.0.0.1]/hook', 'loopback'],
  ['https://[::7f00:1]/hook', 'loopback'],
  ['https://[0:0:0:0:0:0:127.0.0.1]/hook', 'loopback'],
  ['https://[::a9fe:a9fe]/hook', 'linkLocal'],
  ['https://[::169.254.169.254]/hook', 'linkLocal'],
  ['https://[::10.0.0.1]/hook', 'private'],
  ['https://[::c0a8:101]/hook', 'private'],
  ['https://[::8.8.8.8]/hook', 'deprecated'],
  // The unspecified and loopback addresses themselves.
  ['https://[::]/hook', 'unspecified'],
  ['https://[::1]/hook', 'loopback'],
  // IPv4-mapped and IPv4-translated.
  ['https://[::ffff:169.254.169.254]/hook', 'linkLocal'],
  ['https://[::ffff:7f00:1]/hook', 'loopback'],
  ['https://[::ffff:0:a9fe:a9fe]/hook', 'linkLocal'],
  ['https://[::ffff:0:127.0.0.1]/hook', 'loopback'],
  // NAT64: the well-known prefix by the carried address, the local-use prefix always.
  ['https://[64:ff9b::169.254.169.254]/hook', 'linkLocal'],
  ['https://[64:ff9b::7f00:1]/hook', 'loopback'],
  ['https://[64:ff9b::a00:1]/hook', 'private'],
  ['https://[64:ff9b:1::a9fe:a9fe]/hook', 'local-use NAT64'],
  ['https://[64:ff9b:1::808:808]/hook', 'local-use NAT64'],
  // 6to4: IPv4 in bits 16–47.
  ['https://[2002:7f00:1::1]/hook', 'loopback'],
  ['https://[2002:a9fe:a9fe::1]/hook', 'linkLocal'],
  ['https://[2002:c0a8:101::]/hook', 'private'],
  // Teredo: server IPv4 in bits 32–63, client IPv4 in the last 32 bits inverted.
  ['https://[2001:0:808:808::80ff:fffe]/hook', 'loopback'], // client 127.0.0.1
  ['https://[2001:0:808:808::5601:5601]/hook', 'linkLocal'], // client 169.254.169.254
  ['https://[2001:0:a00:1::f7f7:fbfb]/hook', 'private'], // server 10.0.0.1, client 8.8.4.4
];

/** Public IPv4 addresses carried in a form that is routed to them: allowed. */
const allowed = [
  'https://[::ffff:8.8.8.8]/hook',
  'https://[::ffff:0:808:808]/hook',
  'https://[64:ff9b::8.8.8.8]/hook',
  'https://[2002:0808:0808::1]/hook',
  'https://[2001:0:808:808::f7f7:fbfb]/hook', // server 8.8.8.8, client 8.8.4.4
];

let t: TestService;
let live: Client;
beforeAll(async () => {
  // What NODE_ENV=production configures: loopback webhooks off.
  t = await startTestService({ allowLoopbackWebhooks: false });
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

/** Disabled, so that an accepted URL never receives a delivery. */
const create = (url: string) =>
  live.POST('/api/v1/webhooks', { body: { url, events: ['survey.closed'], enabled: false } });

describe('webhook URLs carrying an IPv4 address, in production', () => {
  it('refuses each spelling at create (400 on /body/url, naming why)', async () => {
    for (const [url, why] of refused) {
      const { response, error } = await create(url);
      expect(response.status, url).toBe(400);
      expect(error!.error.code).toBe('validation_failed');
      expect(error!.error.details![0], url).toMatchObject({
        path: '/body/url',
        code: 'invalid_value',
        message: expect.stringContaining(why),
      });
    }
  });

  it('refuses each spelling at update, leaving the webhook as it was', async () => {
    const { data, response } = await create('https://[2606:4700:4700::1111]/hook');
    expect(response.status).toBe(201);
    const path = { params: { path: { id: data!.data.id } } };
    for (const [url, why] of refused) {
      const { response: updated, error } = await live.PATCH('/api/v1/webhooks/{id}', { ...path, body: { url } });
      expect(updated.status, url).toBe(400);
      expect(error!.error.details![0], url).toMatchObject({
        path: '/body/url',
        code: 'invalid_value',
        message: expect.stringContaining(why),
      });
    }
    const unchanged = await live.unwrap(live.GET('/api/v1/webhooks/{id}', path));
    expect(unchanged.url).toBe('https://[2606:4700:4700::1111]/hook');
  });

  it('accepts a public IPv4 address carried in a routed form, at create and at update', async () => {
    const { data } = await create('https://[2606:4700:4700::1111]/hook');
    for (const url of allowed) {
      const created = await create(url);
      expect(created.response.status, `${url}: ${JSON.stringify(created.error)}`).toBe(201);
      const updated = await live.PATCH('/api/v1/webhooks/{id}', {
        params: { path: { id: data!.data.id } },
        body: { url },
      });
      expect(updated.response.status, `${url}: ${JSON.stringify(updated.error)}`).toBe(200);
    }
  });
});

describe('the classifier', () => {
  it('names the carried address, and keeps loopback development-only for the plain and mapped forms', () => {
    expect(refusalOf('::7f00:1', false)).toMatch(/::7f00:1 .*127\.0\.0\.1.*loopback/);
    expect(refusalOf('2001:0:808:808::80ff:fffe', false)).toMatch(/127\.0\.0\.1.*loopback/);
    // A development switch for 127.0.0.1 and ::1 (and ::ffff:127.0.0.1, the same address on a dual-stack socket),
    // not for loopback reached through a translator or a tunnel.
    expect(refusalOf('::ffff:127.0.0.1', true)).toBeUndefined();
    for (const address of ['::7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::1', '2001:0:808:808::80ff:fffe'])
      expect(refusalOf(address, true), address).toContain('loopback');
    // DNS answers spell ::/96 in dotted form; it is still ::7f00:1, not the mapped ::ffff:7f00:1.
    expect(refusalOf('::127.0.0.1', true)).toMatch(
      /::7f00:1 is ipv4Compatible carrying 127\.0\.0\.1, which is loopback/,
    );
    expect(refusalOf('::8.8.8.8', false)).toContain('deprecated');
    // ISATAP interface identifiers carry an IPv4 address in any prefix.
    expect(refusalOf('2606:4700::5efe:a9fe:a9fe', false)).toMatch(
      /ISATAP carrying 169\.254\.169\.254, which is linkLocal/,
    );
    expect(refusalOf('2606:4700::200:5efe:808:808', false)).toBeUndefined();
    // Every IPv6 outside the embedding ranges keeps its own class.
    expect(refusalOf('2606:4700:4700::1111', false)).toBeUndefined();
    expect(refusalOf('fe80::a9fe:a9fe', false)).toContain('linkLocal');
    expect(refusalOf('2001:db8::7f00:1', false)).toContain('reserved');
  });
});

describe('at connect time', () => {
  it('refuses a literal address carrying loopback before connecting', async () => {
    for (const url of [
      'https://[::7f00:1]:9/hook',
      'https://[::127.0.0.1]:9/hook',
      'https://[64:ff9b::7f00:1]:9/hook',
    ]) {
      const result = await postWebhook(url, {}, '{}', { timeoutMs: 2000, allowLoopback: false });
      expect(result.status, url).toBeUndefined();
      expect(result.error, url).toMatch(/address not allowed: .*loopback/);
    }
  });

  it('refuses a resolved address that carries a refused IPv4 address (the lookup the sockets use)', async () => {
    const lookup = guardedLookup(false);
    const resolve = (host: string, all: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((done) =>
        lookup(host, { all }, (error, address) => done({ error, address })),
      );
    for (const host of ['::7f00:1', '::a9fe:a9fe', '2002:a9fe:a9fe::1', '2001:0:808:808::5601:5601']) {
      for (const all of [true, false]) {
        const { error } = await resolve(host, all);
        expect(error?.name, host).toBe('AddressRefused');
        expect(error?.message, host).toMatch(/address not allowed/);
      }
    }
    const { error, address } = await resolve('::ffff:8.8.8.8', true);
    expect(error).toBeNull();
    expect(address).toEqual([{ address: '::ffff:8.8.8.8', family: 6 }]);
  });
});
