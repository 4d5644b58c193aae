/**
 * One respondent record: validated against the contract (the same schema integrators read: the body of
 * `PUT /respondents/{externalId}`, `RespondentUpsert`, with `externalId` required),
 * normalized to the stored shape, and hashed so that unchanged records are recognized without comparing columns.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { components } from '../../generated/openapi.js';
import { contractPath } from '../../http/contract.js';
import { codeOf } from '../../http/error-handler.js';
import type { ErrorDetail } from '../../http/errors.js';
import { strictFormats } from '../../http/formats.js';
import { hasUnstorableCharacter } from '../../http/input-checks.js';
import type { EmploymentType, SyncRecordError } from './tables.js';

export type RespondentInput = components['schemas']['RespondentUpsert'] & { externalId: string };

/** A record ready to store: every optional field filled (absent = null, attributes = {}). */
export interface RespondentRow {
  externalId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  department: string | null;
  location: string | null;
  jobTitle: string | null;
  managerId: string | null;
  hireDate: string | null;
  employmentType: EmploymentType | null;
  attributes: Record<string, unknown>;
  /** JSON text of `attributes`, keys sorted. */
  attributesJson: string;
  contentHash: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
let validator: ValidateFunction | undefined;

/** Compiled once per process from the bundled contract, so the worker checks exactly what the document says. */
function respondentInputValidator(): ValidateFunction {
  if (!validator) {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    // The request validator's date and date-time rules (http/formats.ts), so PUT and sync agree.
    for (const [name, format] of Object.entries(strictFormats)) ajv.addFormat(name, format);
    ajv.addSchema(JSON.parse(readFileSync(contractPath, 'utf8')) as object, 'openapi.json');
    // A sync record is a `PUT` body that must name its externalId (in a PUT the path names it).
    validator = ajv.compile({ $ref: 'openapi.json#/components/schemas/RespondentUpsert', required: ['externalId'] });
  }
  return validator;
}

function describe(error: ErrorObject): { path: string | undefined; message: string; code: string } {
  const params = error.params as Record<string, unknown>;
  let path = error.instancePath;
  const token = (name: unknown) => String(name).slice(0, 64).replace(/~/g, '~0').replace(/\//g, '~1');
  if (error.keyword === 'required') path += `/${token(params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') path += `/${token(params.additionalProperty)}`;
  if (error.keyword === 'propertyNames') path += `/${token(params.propertyName)}`;
  const code = codeOf({ errorCode: error.keyword, message: error.message });
  return { path: path === '' ? undefined : path, message: (error.message ?? 'is invalid').slice(0, 1000), code };
}

/**
 * Every problem of one respondent record — the one validator of `PUT /respondents/{externalId}` and of each
 * sync record: the contract's `RespondentUpsert` (externalId required) with the service's date rules, then what
 * PostgreSQL cannot store. Paths are JSON pointers inside the record.
 */
export function recordProblems(record: unknown): Array<{ path: string | undefined; message: string; code: string }> {
  const validate = respondentInputValidator();
  if (!validate(record)) {
    // anyOf reports each branch too; the anyOf line itself says enough.
    const errors = validate.errors ?? [];
    const branches = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.schemaPath));
    return errors.filter((e) => ![...branches].some((b) => e.schemaPath !== b && e.schemaPath.startsWith(b.replace(/\/anyOf$/, '/anyOf/')))).map(describe);
  }
  const problem = unstorable(record as RespondentInput);
  return problem ? [problem] : [];
}

/** The same problems as ErrorDetails of a request (`/body/…`). */
export function recordDetails(record: unknown): ErrorDetail[] {
  return recordProblems(record).map((problem) => (problem.path === undefined ? { message: problem.message, code: problem.code } : { path: `/body${problem.path}`, message: problem.message, code: problem.code }));
}

/** The record's `externalId` when it is usable (a string of 1–255 characters), for error reports and dedupe. */
export function usableExternalId(record: unknown): string | null {
  const id = (record as { externalId?: unknown } | null)?.externalId;
  return typeof id === 'string' && id.length >= 1 && id.length <= 255 ? id : null;
}

export type Checked = { ok: true; row: RespondentRow } | { ok: false; error: SyncRecordError };

/**
 * What the schema allows but PostgreSQL cannot store: NUL characters in text, and the year 0000 in a date. Found
 * here, they are one record's error (or a 400) instead of a failed write.
 */
export function unstorable(input: Omit<RespondentInput, 'externalId'> & { externalId?: string }): { path: string; message: string; code: string } | undefined {
  if (input.hireDate?.startsWith('0000')) return { path: '/hireDate', message: 'must be a date from 0001-01-01 on', code: 'format' };
  const message = 'must not contain NUL characters or unpaired UTF-16 surrogates';
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === 'string' && hasUnstorableCharacter(value)) return { path: `/${key}`, message, code: 'invalid_character' };
  }
  for (const [key, value] of Object.entries(input.attributes ?? {})) {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return { path: `/attributes/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: 'must be a finite number (at most about 1.8e308)', code: 'out_of_range' };
    }
    if (hasUnstorableCharacter(key) || (typeof value === 'string' && hasUnstorableCharacter(value))) {
      return { path: `/attributes/${key.replace(/[\0\uD800-\uDFFF]/g, '\uFFFD').replace(/~/g, '~0').replace(/\//g, '~1')}`, message, code: 'invalid_character' };
    }
  }
  return undefined;
}

/** Validates one sync record; `index` is its position in the request. */
export function checkRecord(record: unknown, index: number): Checked {
  const problems = recordProblems(record);
  if (problems.length === 0) return { ok: true, row: normalize(record as RespondentInput) };
  const { path, message } = problems[0]!;
  const error: SyncRecordError = { index, externalId: usableExternalId(record), message };
  if (path !== undefined) error.path = path;
  return { ok: false, error };
}

/** Keys sorted; built with fromEntries so that a key such as `__proto__` stays data (an assignment would drop it). */
function sortedAttributes(attributes: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!attributes) return {};
  return Object.fromEntries(Object.keys(attributes).sort().map((key) => [key, attributes[key]]));
}

/** The stored shape of a valid record. E-mails are kept as sent; lookups compare them case-insensitively. */
export function normalize(input: RespondentInput): RespondentRow {
  const attributes = sortedAttributes(input.attributes as Record<string, unknown> | undefined);
  const attributesJson = JSON.stringify(attributes);
  const fields = [
    input.email,
    input.firstName ?? null,
    input.lastName ?? null,
    input.department ?? null,
    input.location ?? null,
    input.jobTitle ?? null,
    input.managerId ?? null,
    input.hireDate ?? null,
    input.employmentType ?? null,
  ] as const;
  const contentHash = createHash('sha1').update(JSON.stringify(fields)).update(attributesJson).digest('base64url');
  return {
    externalId: input.externalId,
    email: fields[0],
    firstName: fields[1],
    lastName: fields[2],
    department: fields[3],
    location: fields[4],
    jobTitle: fields[5],
    managerId: fields[6],
    hireDate: fields[7],
    employmentType: fields[8],
    attributes,
    attributesJson,
    contentHash,
  };
}
