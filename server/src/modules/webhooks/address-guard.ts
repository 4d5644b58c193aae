/**
 * SSRF protection. A webhook may only reach public unicast addresses; `ipaddr.js` classifies addresses (its
 * ranges are maintained against the IANA registries), so no IPv4 or plain IPv6 range is written by hand here.
 * The check runs when a URL is saved and again on every connection, inside the socket's DNS lookup, so the
 * address checked is the address connected to (no DNS-rebinding window).
 *
 * IPv6 addresses that carry an IPv4 address are judged by the IPv4 address they carry, because that is where a
 * packet to them ends up (through a dual-stack socket, a NAT64 or SIIT translator, a 6to4 relay, a Teredo relay
 * or an automatic tunnel of this host): `::ffff:169.254.169.254` and `64:ff9b::a9fe:a9fe` are the metadata
 * service. A carried address that is not public refuses the whole address; a public one is allowed, since the
 * packet goes to that public host — except where the form itself has no legitimate public use: the deprecated
 * IPv4-compatible `::/96` (RFC 4291; no mechanism produces it any more, but Linux's `sit` tunnel still routes it)
 * and the local-use NAT64 prefix `64:ff9b:1::/48` (RFC 8215: a translator inside someone's own network, whose
 * embedding position depends on a prefix length we cannot know) are refused whatever they carry. Loopback
 * stays a development switch for 127.0.0.0/8, `::1` and `::ffff:127.0.0.0/104` (the same host seen through a
 * dual-stack socket) only, never for loopback reached through a translator or a tunnel.
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

/** A form of IPv6 address that carries IPv4 addresses, and where. */
interface Embedding {
  /** `ipaddr.js`'s name for the range where it has one (`ipv4Compatible` and `rfc8215` are named here). */
  name: string;
  prefix: [ipaddr.IPv6, number];
  /** The IPv4 addresses the packet ends up at, from the address's 16 bytes. */
  carried: (bytes: number[]) => ipaddr.IPv4[];
  /** Refused whatever it carries, and why. */
  refused?: string;
  /** 127.0.0.1 through this form is this host's loopback (a dual-stack socket), so the development switch applies. */
  sameHost?: boolean;
}

const v4At = (bytes: number[], offset: number, invert = false) =>
  new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => (invert ? b ^ 0xff : b)));
const lastFour = (bytes: number[]) => [v4At(bytes, 12)];

/** Disjoint ranges, so their order does not matter. */
const embeddings: Embedding[] = [
  { name: 'ipv4Mapped', prefix: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), carried: lastFour, sameHost: true },
  { name: 'rfc6145', prefix: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), carried: lastFour },
  {
    name: 'ipv4Compatible',
    prefix: ipaddr.IPv6.parseCIDR('::/96'),
    carried: lastFour,
    refused: 'deprecated IPv4-compatible address (::/96)',
  },
  { name: 'rfc6052', prefix: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), carried: lastFour },
  {
    name: 'rfc8215',
    prefix: ipaddr.IPv6.parseCIDR('64:ff9b:1::/48'),
    carried: () => [],
    refused: 'local-use NAT64 prefix (64:ff9b:1::/48)',
  },
  { name: '6to4', prefix: ipaddr.IPv6.parseCIDR('2002::/16'), carried: (bytes) => [v4At(bytes, 2)] },
  // Teredo: the server's address in bits 32–63, the client's (its NAT's public side) inverted in the last 32.
  {
    name: 'teredo',
    prefix: ipaddr.IPv6.parseCIDR('2001::/32'),
    carried: (bytes) => [v4At(bytes, 4), v4At(bytes, 12, true)],
  },
];

/** ISATAP (RFC 5214): in any prefix, an interface identifier of `0:5efe` or `200:5efe` followed by the IPv4 address. */
function isatapCarried(bytes: number[]): ipaddr.IPv4 | undefined {
  const [a, b, c, d] = bytes.slice(8, 12);
  return (a === 0x00 || a === 0x02) && b === 0x00 && c === 0x5e && d === 0xfe ? v4At(bytes, 12) : undefined;
}

/** Why an IPv4 address may not be reached, or undefined. */
function ipv4Refusal(address: ipaddr.IPv4, allowLoopback: boolean): string | undefined {
  const range = address.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && allowLoopback) return undefined;
  return range;
}

/**
 * The IPv6 address in the WHATWG URL serialisation (hex only, compressed), which is what URLs hold. Needed
 * because DNS results spell `::/96` and `::ffff:0:0/96` in dotted form (`::127.0.0.1`), and `ipaddr.js` reads
 * the dotted `::a.b.c.d` as `::ffff:a.b.c.d` — a different address.
 */
function canonicalIPv6(address: string): string {
  const withoutZone = address.replace(/%.*$/, '');
  try {
    return new URL(`http://[${withoutZone}]/`).hostname.slice(1, -1);
  } catch {
    return withoutZone;
  }
}

/** Why an address may not be reached, or undefined when it may. */
export function refusalOf(address: string, allowLoopback: boolean): string | undefined {
  const family = isIP(address.replace(/%.*$/, ''));
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    if (family === 4) parsed = ipaddr.IPv4.parse(address);
    else if (family === 6) parsed = ipaddr.IPv6.parse(canonicalIPv6(address));
    else return `${address} is not an IP address`;
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === 'ipv4') {
    const refusal = ipv4Refusal(parsed as ipaddr.IPv4, allowLoopback);
    return refusal && `address not allowed: ${parsed.toString()} is ${refusal}`;
  }
  const v6 = parsed as ipaddr.IPv6;
  const shown = v6.toString();
  const range = v6.range();
  // `::` and `::1` lie inside `::/96` but are addresses of their own, not carriers of 0.0.0.0 and 0.0.0.1.
  if (range === 'unspecified') return `address not allowed: ${shown} is unspecified`;
  if (range === 'loopback') return allowLoopback ? undefined : `address not allowed: ${shown} is loopback`;
  const bytes = v6.toByteArray();
  const embedding = embeddings.find((e) => v6.match(e.prefix));
  if (embedding) {
    for (const carried of embedding.carried(bytes)) {
      const refusal = ipv4Refusal(carried, allowLoopback && embedding.sameHost === true);
      if (refusal)
        return `address not allowed: ${shown} is ${embedding.name} carrying ${carried.toString()}, which is ${refusal}`;
    }
    return embedding.refused ? `address not allowed: ${shown} is a ${embedding.refused}` : undefined;
  }
  if (range !== 'unicast') return `address not allowed: ${shown} is ${range}`;
  const isatap = isatapCarried(bytes);
  const refusal = isatap && ipv4Refusal(isatap, false);
  if (isatap && refusal)
    return `address not allowed: ${shown} is ISATAP carrying ${isatap.toString()}, which is ${refusal}`;
  return undefined;
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
