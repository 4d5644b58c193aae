/**
 * Opaque, prefixed, time-sortable identifiers (`srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8`): 48 bits of milliseconds and
 * 80 random bits in Crockford base32, like a ULID. Sorting by id sorts by creation time, which gives lists
 * a stable tie-break.
 */
import { randomFillSync } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix =
  | 'org'
  | 'key'
  | 'srv'
  | 'rsp'
  | 'whk'
  | 'whd'
  | 'evt'
  | 'job'
  | 'dst'
  | 'exp'
  | 'ana'
  | 'req'
  | 'usr'
  | 'prv'
  | 'aud'
  | 'ret';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = alphabet[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

// Random bytes drawn from the CSPRNG 4 KiB at a time and handed out in order, never twice: one call to the generator
// per 256 ids instead of one per id (request ids make this a per-request cost).
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function encodeRandom(length: number): string {
  if (poolOffset + length > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let i = poolOffset; i < poolOffset + length; i++) out += alphabet[pool[i]! & 31];
  poolOffset += length;
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
