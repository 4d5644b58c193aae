/**
 * SSRF protection. A webhook may only reach public unicast addresses; `ipaddr.js` classifies addresses (its
 * ranges are maintained against the IANA registries, and `process` unwraps IPv4-mapped IPv6), so no range is
 * written by hand here. The check runs when a URL is saved and again on every connection, inside the socket's
 * DNS lookup, so the address checked is the address connected to (no DNS-rebinding window).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export class AddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefused';
  }
}

/** Why an address may not be reached, or undefined when it may. */
export function refusalOf(address: string, allowLoopback: boolean): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return `${address} is not an IP address`;
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && allowLoopback) return undefined;
  return `address not allowed: ${parsed.toString()} is ${range}`;
}

/** The host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks a webhook URL when it is saved: scheme, and every address its host resolves to. Returns the problem
 * for the integrator, or undefined. (WHATWG URL parsing already turns decimal, octal and hex IPv4 forms such as
 * `http://2130706433/` into dotted quads, so they are checked like any literal.)
 */
export async function checkWebhookUrl(raw: string, allowLoopback: boolean): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback)) {
    return allowLoopback ? 'must use https (or http)' : 'must use https';
  }
  if (url.username || url.password) return 'must not contain a user name or password';
  const host = hostOf(url);
  if (isIP(host)) return refusalOf(host, allowLoopback);
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true, verbatim: true }, (error, found) => (error ? reject(error) : resolve(found))),
    );
  } catch {
    return `host ${host} does not resolve`;
  }
  for (const { address } of addresses) {
    const refusal = refusalOf(address, allowLoopback);
    if (refusal) return `${refusal} (${host} resolves to it)`;
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves as usual and refuses the connection when any resolved address is
 * not allowed. Node calls it with `all: true` (happy eyeballs) or without; both forms are answered.
 */
export function guardedLookup(allowLoopback: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      for (const { address } of addresses) {
        const refusal = refusalOf(address, allowLoopback);
        if (refusal) return callback(new AddressRefused(refusal), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

/** For literal-IP URLs (Node connects to those without calling `lookup`). */
export function literalRefusal(url: URL, allowLoopback: boolean): string | undefined {
  const host = hostOf(url);
  return isIP(host) ? refusalOf(host, allowLoopback) : undefined;
}
