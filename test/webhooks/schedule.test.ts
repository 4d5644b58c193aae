/**
 * The retry schedule and the address rules as plain functions: the real 27-hour schedule is checked here by
 * arithmetic (the delivery tests run a 300 ms schedule), and the SSRF classification with loopback allowed and not.
 */
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, refusalOf } from '../../server/src/modules/webhooks/address-guard.js';
import { parseSchedule, standardSchedule } from '../../server/src/config.js';
import { nextDelayMs, parseRetryAfter, retryAfterCapMs } from '../../server/src/modules/webhooks/schedule.js';

const s = 1000;
const min = 60 * s;
const h = 60 * min;

describe('retry schedule', () => {
  it('is the Standard Webhooks schedule: now, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — eight attempts, about 27 h', () => {
    const exact = () => 0.5; // no jitter
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) => nextDelayMs(standardSchedule, attempt, undefined, exact));
    expect(delays).toEqual([5 * s, 5 * min, 30 * min, 2 * h, 5 * h, 10 * h, 10 * h]);
    expect(nextDelayMs(standardSchedule, 8, undefined, exact)).toBeUndefined();
    const total = delays.reduce((a, b) => a! + b!, 0)!;
    expect(total / h).toBeCloseTo(27.59, 1);
  });

  it('jitters each delay by at most ±10 %', () => {
    expect(nextDelayMs(standardSchedule, 4, undefined, () => 0)).toBe(0.9 * 2 * h);
    expect(nextDelayMs(standardSchedule, 4, undefined, () => 0.999999)).toBeCloseTo(1.1 * 2 * h, -2);
    for (let i = 0; i < 200; i++) {
      const d = nextDelayMs(standardSchedule, 2, undefined)!;
      expect(d).toBeGreaterThanOrEqual(0.9 * 5 * min);
      expect(d).toBeLessThanOrEqual(1.1 * 5 * min);
    }
  });

  it('takes Retry-After as a lower bound, capped at an hour', () => {
    const exact = () => 0.5;
    expect(nextDelayMs(standardSchedule, 1, 60 * s, exact)).toBe(60 * s);
    expect(nextDelayMs(standardSchedule, 1, 1 * s, exact)).toBe(5 * s);
    expect(nextDelayMs(standardSchedule, 1, 48 * h, exact)).toBe(retryAfterCapMs);
    expect(nextDelayMs(standardSchedule, 6, 48 * h, exact)).toBe(10 * h);
    expect(nextDelayMs(standardSchedule, 8, 1 * s, exact)).toBeUndefined();
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Tue, 24 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 24 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('accepts a test schedule only when it starts at 0', () => {
    expect(parseSchedule(undefined)).toBe(standardSchedule);
    expect(parseSchedule('0,100,200')).toEqual([0, 100, 200]);
    expect(() => parseSchedule('100,200')).toThrow(/starting with 0/);
    expect(() => parseSchedule('0,-1')).toThrow();
  });
});

describe('address rules (SSRF)', () => {
  it('allows public unicast only; loopback only with the development switch', () => {
    for (const address of ['8.8.8.8', '2606:4700:4700::1111']) expect(refusalOf(address, false)).toBeUndefined();
    const refused = {
      '127.0.0.1': 'loopback',
      '::1': 'loopback',
      '10.0.0.1': 'private',
      '172.16.5.4': 'private',
      '192.168.1.1': 'private',
      '169.254.169.254': 'linkLocal',
      'fe80::1': 'linkLocal',
      '100.64.0.1': 'carrierGradeNat',
      'fd12:3456::1': 'uniqueLocal',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '0.0.0.0': 'unspecified',
      '255.255.255.255': 'broadcast',
      '192.0.2.10': 'reserved',
      '::ffff:10.0.0.1': 'private',
      '::ffff:127.0.0.1': 'loopback',
      '64:ff9b::a00:1': 'rfc6052',
      '2002:a00:1::': '6to4',
    };
    for (const [address, range] of Object.entries(refused)) expect(refusalOf(address, false), address).toContain(range);
    expect(refusalOf('127.0.0.1', true)).toBeUndefined();
    expect(refusalOf('::ffff:127.0.0.1', true)).toBeUndefined();
    expect(refusalOf('10.0.0.1', true)).toContain('private');
  });

  it('checks literal, decimal and hex IPs, the scheme, and what a host name resolves to', async () => {
    expect(await checkWebhookUrl('https://2130706433/hook', false)).toContain('loopback');
    expect(await checkWebhookUrl('https://0x7f.1/hook', false)).toContain('loopback');
    expect(await checkWebhookUrl('https://[::ffff:7f00:1]/hook', false)).toContain('loopback');
    expect(await checkWebhookUrl('https://localhost:8443/hook', false)).toContain('loopback');
    expect(await checkWebhookUrl('http://127.0.0.1/hook', false)).toBe('must use https');
    expect(await checkWebhookUrl('http://127.0.0.1/hook', true)).toBeUndefined();
    expect(await checkWebhookUrl('http://localhost/hook', true)).toBeUndefined();
    expect(await checkWebhookUrl('https://user:pw@8.8.8.8/', false)).toContain('user name');
    expect(await checkWebhookUrl('https://8.8.8.8/hook', false)).toBeUndefined();
    expect(await checkWebhookUrl('https://no-such-host.invalid/hook', false)).toContain('does not resolve');
  });
});

describe('address rules at connect time', () => {
  it('refuses the resolved address before connecting (DNS rebinding), and literal IPs', async () => {
    const { postWebhook } = await import('../../server/src/modules/webhooks/sender.js');
    const resolved = await postWebhook('https://localhost:9/hook', {}, '{}', { timeoutMs: 2000, allowLoopback: false });
    expect(resolved.status).toBeUndefined();
    expect(resolved.error).toMatch(/address not allowed: (127\.0\.0\.1|::1) is loopback/);
    const literal = await postWebhook('https://[::ffff:127.0.0.1]:9/hook', {}, '{}', {
      timeoutMs: 2000,
      allowLoopback: false,
    });
    expect(literal.error).toContain('loopback');
  });
});
