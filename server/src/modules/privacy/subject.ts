/**
 * A request's subject, and what is kept of it. The identifier is used while the request runs and then forgotten;
 * the request keeps its kind and a fingerprint: `sha256:` + hex SHA-256 of a random salt of its own and the
 * identifier (an e-mail address in lower case, as every comparison of addresses is). The salt is per request, so
 * the fingerprints of two requests about one person differ, and a table of fingerprints cannot be matched against
 * a list of addresses in one pass; whoever holds an identifier can still ask whether a request was about it
 * (`fingerprintMatches`), which is how an erasure finds the access files made earlier for the same person.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PrivacyRequestSubject as SubjectInput } from '../../generated/openapi.js';
import type { SubjectKind } from './tables.js';

export type { SubjectInput };

export interface Subject {
  kind: SubjectKind;
  /** The identifier as sent. */
  value: string;
}

export function subjectOf(input: SubjectInput): Subject {
  return 'externalId' in input
    ? { kind: 'externalId', value: input.externalId }
    : { kind: 'email', value: input.email };
}

/** The form fingerprints and lookups compare: e-mail addresses without regard to case. */
export function canonical(kind: SubjectKind, value: string): string {
  return kind === 'email' ? value.trim().toLowerCase() : value;
}

export function fingerprintOf(salt: Buffer, kind: SubjectKind, value: string): string {
  const hash = createHash('sha256').update(salt).update(`${kind}:`).update(canonical(kind, value), 'utf8');
  return `sha256:${hash.digest('hex')}`;
}

export function newFingerprint(subject: Subject): { salt: Buffer; fingerprint: string } {
  const salt = randomBytes(16);
  return { salt, fingerprint: fingerprintOf(salt, subject.kind, subject.value) };
}

/** Whether a request of that salt and fingerprint was about one of these identifiers. */
export function fingerprintMatches(
  request: { salt: Buffer; kind: SubjectKind; fingerprint: string },
  identifiers: { externalIds: readonly string[]; emails: readonly string[] },
): boolean {
  const values = request.kind === 'externalId' ? identifiers.externalIds : identifiers.emails;
  return values.some((value) => fingerprintOf(request.salt, request.kind, value) === request.fingerprint);
}
