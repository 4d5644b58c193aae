/**
 * Opaque, prefixed, time-sortable identifiers (`srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8`): 48 bits of milliseconds and
 * 80 random bits in Crockford base32, like a ULID. Sorting by id sorts by creation time, which gives lists
 * a stable tie-break.
 */
import { randomBytes } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix = 'org' | 'key' | 'srv' | 'rsp' | 'whk' | 'whd' | 'evt' | 'job' | 'dst' | 'exp' | 'ana' | 'req';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = alphabet[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${encodeTime(Date.now())}${encodeRandom(16)}`;
}

const idPattern = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `value` is a well-formed id of that kind; malformed ids are answered like unknown ones (404). */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && idPattern.test(value);
}
