/**
 * Kiosk access codes: what a person without e-mail types at a shared screen (`/k`) to open their answer page.
 *
 * A code is 12 Crockford base32 characters, printed in groups of four (`K7QM-4XRT-9PZ3`):
 * - the first group is the distribution's prefix: 20 random bits drawn when the distribution is created, kept in
 *   the small `kiosk_prefixes` table (a reference table on Citus). It tells `/k` the tenant and distribution before
 *   anything else is read, so the lookup of the rest is one tenant-led, single-shard query, and a wrong code still
 *   names the distribution whose budget of wrong tries it spends. Prefixes are never reused, so an old card cannot
 *   open a later distribution.
 * - the other two are the person's secret: the first 40 bits of HMAC-SHA256 under the link key (tokens.ts) of
 *   `kiosk:<distributionId>:<round>:<externalId>`. Like personal link tokens, the code is derived, never stored:
 *   listings and the CSV recompute it. `round` is 0 unless two recipients of one distribution drew the same 40
 *   bits; the later one (by external id) then takes the next round (`separateAccessCodes` in the repository).
 *
 * What is stored is `HMAC(link key, "kiosk-code:<distributionId>:" ‖ secret bits)`: a keyed hash, because 40 bits
 * hashed without a key could be found by trying them all against a copy of the database. The send computes it in
 * PostgreSQL for every recipient in one statement (`accessCodeHashSql`); `accessCodeHash` and it must agree (tested).
 *
 * Reading is forgiving: case, spaces and dashes do not matter, and the letters Crockford's alphabet leaves out for
 * looking like digits are read as those digits (O as 0, I and L as 1).
 */
import { randomInt } from 'node:crypto';
import { sql, type Expression, type RawBuilder } from 'kysely';
import { hmacSql, macOf, type LinkKey } from './tokens.js';

/** Crockford's base32: digits and letters without I, L, O and U. */
export const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const PREFIX_LENGTH = 4;
/** 8 characters of 5 bits: the 40 secret bits of a code. */
export const SECRET_LENGTH = 8;
const SECRET_BYTES = 5;
export const CODE_LENGTH = PREFIX_LENGTH + SECRET_LENGTH;

/** A code as printed: groups of four joined by dashes. */
export function formatCode(characters: string): string {
  return characters.match(/.{1,4}/g)!.join('-');
}

/** A new distribution's prefix: 20 bits from the CSPRNG. */
export function randomPrefix(): string {
  let prefix = '';
  for (let i = 0; i < PREFIX_LENGTH; i++) prefix += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return prefix;
}

function encode(bytes: Buffer, characters: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < characters) {
      out += CODE_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

function decode(characters: string): Buffer {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of characters) {
    value = (value << 5) | CODE_ALPHABET.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
    value &= (1 << bits) - 1;
  }
  return Buffer.from(bytes);
}

const secretMessage = (distributionId: string, round: number, externalId: string) =>
  `kiosk:${distributionId}:${round}:${externalId}`;
const hashPrefix = (distributionId: string) => Buffer.from(`kiosk-code:${distributionId}:`, 'utf8');

const secretOf = (key: LinkKey, distributionId: string, externalId: string, round: number) =>
  macOf(key, secretMessage(distributionId, round, externalId)).subarray(0, SECRET_BYTES);

/** The code of one recipient, as printed. */
export function accessCode(
  key: LinkKey,
  prefix: string,
  distributionId: string,
  externalId: string,
  round: number,
): string {
  return formatCode(prefix + encode(secretOf(key, distributionId, externalId, round), SECRET_LENGTH));
}

/** The stored hash of one recipient's code: what `accessCodeHashSql` computes, in JS. */
export function recipientCodeHash(key: LinkKey, distributionId: string, externalId: string, round: number): Buffer {
  return accessCodeHash(key, distributionId, secretOf(key, distributionId, externalId, round));
}

export interface ParsedCode {
  prefix: string;
  /** The 40 secret bits. */
  secret: Buffer;
}

/**
 * What was typed, read as a code: upper case, without white space and dashes of any kind, O read as 0 and I, L as 1.
 * Undefined when that is not 12 characters of the alphabet.
 */
export function parseCode(typed: string): ParsedCode | undefined {
  const characters = typed
    .toUpperCase()
    .replace(/[\s\p{Pd}]+/gu, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
  if (characters.length !== CODE_LENGTH || ![...characters].every((c) => CODE_ALPHABET.includes(c))) return undefined;
  return { prefix: characters.slice(0, PREFIX_LENGTH), secret: decode(characters.slice(PREFIX_LENGTH)) };
}

/** The stored hash of a typed code's secret, for the lookup. */
export function accessCodeHash(key: LinkKey, distributionId: string, secret: Buffer): Buffer {
  return macOf(key, Buffer.concat([hashPrefix(distributionId), secret]));
}

/**
 * SQL for the stored hash of the code of the recipient whose external id and round are these expressions: the
 * same HMACs as `accessCode` and `accessCodeHash`, written out with PostgreSQL's sha256 (tokens.ts `hmacSql`).
 */
export function accessCodeHashSql(
  key: LinkKey,
  distributionId: string,
  externalId: Expression<unknown>,
  round: Expression<unknown>,
): RawBuilder<Buffer> {
  const message = sql`convert_to(${`kiosk:${distributionId}:`} || (${round})::text || ':' || ${externalId}, 'UTF8')`;
  const secret = sql`substring(${hmacSql(key, message)} from 1 for ${SECRET_BYTES})`;
  return hmacSql(key, sql`${hashPrefix(distributionId)}::bytea || ${secret}`);
}
