/**
 * API key values: `svc_live_` or `svc_test_` + 64 lowercase hex characters (256 bits from the CSPRNG). Only
 * the SHA-256 of a key is stored; a fast hash is right here because the key is itself 256 random bits, so
 * there is nothing to brute-force, and lookups by hash leak nothing about the key through timing.
 */
import { hash, randomBytes } from 'node:crypto';
import type { Environment } from '../../db/schema.js';

export const keyFormat = /^svc_(live|test)_[0-9a-f]{64}$/;

export function generateKey(environment: Environment): string {
  return `svc_${environment === 'LIVE' ? 'live' : 'test'}_${randomBytes(32).toString('hex')}`;
}

/** One-shot `hash`: every authenticated request hashes its key, and a `Hash` object costs three times as much. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function environmentOfKey(key: string): Environment {
  return key.startsWith('svc_live_') ? 'LIVE' : 'TEST';
}

export function maskKey(environment: Environment, last4: string): string {
  return `svc_${environment === 'LIVE' ? 'live' : 'test'}_••••••••${last4}`;
}
