/**
 * One respondent record: validated against the contract (the same schema integrators read: the body of
 * `PUT /respondents/{externalId}`, `RespondentUpsert`, with `externalId` required) and the request path's own
 * rules for what JSON carries but nothing can store (characters, depth, numbers beyond float64), normalized to the
 * stored shape, and hashed so that unchanged records are recognized without comparing columns. The one owner of
 * "is this record acceptable": `PUT` answers its problems as the 400's details, a sync reports them as that
 * record's error.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { RespondentUpsert } from '../../generated/openapi.js';
import {
  checkValue,
  codeOf,
  contractPath,
  hasUnstorableCharacter,
  strictFormats,
  type ErrorDetail,
} from '../../http/index.js';
import type { EmploymentType, SyncRecordError } from './tables.js';

export type RespondentInput = RespondentUpsert & { externalId: string };

/** A record ready to store: every optional field filled (absent = null, attributes = {}). */
export interface RespondentRow {
  externalId: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  department: string | null;
  location: string | null;
  jobTitle: string | null;
  managerId: string | null;
  hireDate: string | null;
  employmentType: EmploymentType | null;
  attributes: Record<string, unknown>;
  language: string | null;
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

export interface RecordProblem {
  /** JSON Pointer inside the record; undefined when the record as a whole is wrong. */
  path: string | undefined;
  message: string;
  code: string;
}

/** A member name in a pointer, as the request path writes it (http/input-checks.ts): nothing unstorable, at most 64
 * characters. */
function token(name: unknown): string {
  const cleaned = String(name).replace(/[\0\uD800-\uDFFF]/g, '\uFFFD');
  return (cleaned.length > 64 ? `${cleaned.slice(0, 64)}…` : cleaned).replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(error: ErrorObject): RecordProblem {
  const params = error.params as Record<string, unknown>;
  let path = error.instancePath;
  if (error.keyword === 'required') path += `/${token(params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') path += `/${token(params.additionalProperty)}`;
  // A member name breaking `propertyNames` is reported at its object, as the request validator reports it.
  const code = codeOf({ errorCode: error.keyword, message: error.message });
  return { path: path === '' ? undefined : path, message: (error.message ?? 'is invalid').slice(0, 1000), code };
}

/**
 * What JSON carries but the service cannot keep, by the request path's rules (http/input-checks.ts `checkValue`):
 * NUL characters and lone surrogates in values and member names, numbers beyond float64 (`1e400` parses as
 * Infinity, which JSON cannot carry back), nesting past 32 levels. Walked from the record's root, as PUT's body is
 * walked, so depths and paths agree.
 */
function carriedProblems(record: unknown): RecordProblem[] {
  const found: ErrorDetail[] = [];
  checkValue(record, '', found);
  return found.map((problem) => ({
    path: problem.path === '' ? undefined : problem.path,
    message: problem.message,
    code: problem.code,
  }));
}

/**
 * The schema's problems. `anyOf` reports each branch too: at a place with an anyOf/oneOf line, the branches'
 * type/enum/const lines are dropped (the one line says it better), the rule the error handler applies to the
 * request validator's issues, so PUT and a sync list the same problems.
 */
function schemaProblems(record: unknown): RecordProblem[] {
  const validate = respondentInputValidator();
  if (validate(record)) return [];
  const errors = validate.errors ?? [];
  const alternative = (e: ErrorObject) => e.keyword === 'anyOf' || e.keyword === 'oneOf';
  const places = new Set(errors.filter(alternative).map((e) => e.instancePath));
  return errors
    .filter((e) => alternative(e) || !places.has(e.instancePath) || !['type', 'enum', 'const'].includes(e.keyword))
    .map(describe);
}

/**
 * Every problem of one respondent record — the one validator of `PUT /respondents/{externalId}` and of each
 * sync record, in the order PUT's 400 lists them: a record nested too deep is answered with the walk's problems
 * alone (as the request path answers such a body at once); otherwise the schema's problems (the contract's
 * `RespondentUpsert`, externalId required, with the service's date rules), where a walk's problem at the same
 * place replaces the schema's (it is the more precise one, as in the error handler), then the walk's; a problem
 * is listed once per place and code. Paths are JSON pointers inside the record.
 */
export function recordProblems(record: unknown): RecordProblem[] {
  const carried = carriedProblems(record);
  if (carried.some((problem) => problem.code === 'too_deep')) return carried;
  const problems: RecordProblem[] = [];
  for (const problem of schemaProblems(record)) {
    if (carried.some((early) => early.path !== undefined && early.path === problem.path)) continue;
    if (!problems.some((p) => p.path === problem.path && p.code === problem.code)) problems.push(problem);
  }
  for (const early of carried)
    if (!problems.some((p) => p.path === early.path && p.code === early.code)) problems.push(early);
  return problems;
}

/** The same problems as ErrorDetails of a request (`/body/…`). */
export function recordDetails(record: unknown): ErrorDetail[] {
  return recordProblems(record).map((problem) =>
    problem.path === undefined
      ? { message: problem.message, code: problem.code }
      : { path: `/body${problem.path}`, message: problem.message, code: problem.code },
  );
}

/** The record's `externalId` when it is usable (a string of 1–255 characters), for error reports and dedupe. */
export function usableExternalId(record: unknown): string | null {
  const id = (record as { externalId?: unknown } | null)?.externalId;
  return typeof id === 'string' && id.length >= 1 && id.length <= 255 ? id : null;
}

export type Checked = { ok: true; row: RespondentRow } | { ok: false; error: SyncRecordError };

/** NUL and lone surrogates made U+FFFD: the job's errors are jsonb, which holds neither. */
function storable(text: string, maxLength: number): string {
  const clean = text.replace(/\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return clean.length > maxLength ? `${clean.slice(0, maxLength - 1)}…` : clean;
}

/**
 * A sync record's error: its first problem (the first detail PUT answers for the record alone), made storable
 * and kept within the contract's lengths; the externalId is named only when it can be stored.
 */
export function recordError(
  index: number,
  externalId: string | null,
  problems: readonly RecordProblem[],
): SyncRecordError {
  const { path, message, code } = problems[0]!;
  const error: SyncRecordError = {
    index,
    externalId: externalId !== null && hasUnstorableCharacter(externalId) ? null : externalId,
    message: storable(message, 1000),
    code,
  };
  if (path !== undefined) error.path = storable(path, 500);
  return error;
}

/** Validates one sync record; `index` is its position in the request. */
export function checkRecord(record: unknown, index: number): Checked {
  const problems = recordProblems(record);
  if (problems.length === 0) return { ok: true, row: normalize(record as RespondentInput) };
  return { ok: false, error: recordError(index, usableExternalId(record), problems) };
}

/**
 * A sync record that cannot travel to the worker as it came: nested too deep for the request path's recursive
 * steps (the idempotency hash, JSON.stringify), or holding a number JSON cannot carry (stored as JSON, `1e400`
 * would reach the worker as `null`, another record). It is replaced in the request by its problems — found by
 * `recordProblems`, as for any record — and stays that record's error. `fingerprint` stands for its content in
 * the idempotency hash, so two requests that differ only inside such a record are still told apart.
 */
export class UnsendableRecord {
  constructor(
    readonly externalId: string | null,
    readonly problems: readonly RecordProblem[],
    readonly fingerprint: string,
  ) {}
}

const screenedArrays = new WeakSet<readonly unknown[]>();

/**
 * Replaces, in place, each record of a sync request that cannot travel as JSON by an `UnsendableRecord` (see there).
 * Called on the parsed body before anything walks it recursively (http/app.ts), and again by `startSync` for
 * callers outside HTTP; an array already screened is not walked again. Other records are left as sent: the
 * worker validates them.
 */
export function setAsideUnsendableRecords(records: unknown[]): void {
  if (screenedArrays.has(records)) return;
  for (let index = 0; index < records.length; index++) {
    const record = records[index];
    if (record === null || typeof record !== 'object' || record instanceof UnsendableRecord) continue;
    const found: ErrorDetail[] = [];
    checkValue(record, '', found, 1, 0, false);
    if (found.length === 0) continue;
    records[index] = new UnsendableRecord(usableExternalId(record), recordProblems(record), fingerprint(record));
  }
  screenedArrays.add(records);
}

/**
 * A digest of a JSON value of any depth, members in name order (as the idempotency hash orders them), walked with
 * an explicit stack so no nesting can exhaust the call stack. Numbers are written with String(), so `1e400`
 * (Infinity) differs from `null`.
 */
function fingerprint(value: unknown): string {
  const hash = createHash('sha256');
  // Work items: a value still to write, or text to write as it is.
  const stack: Array<{ value: unknown } | string> = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      hash.update(item);
      continue;
    }
    const current = item.value;
    if (Array.isArray(current)) {
      hash.update('[');
      stack.push(']');
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i] });
        if (i > 0) stack.push(',');
      }
    } else if (current !== null && typeof current === 'object') {
      hash.update('{');
      stack.push('}');
      const entries = Object.entries(current as Record<string, unknown>).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ value: entries[i]![1] }, `${JSON.stringify(entries[i]![0])}:`);
        if (i > 0) stack.push(',');
      }
    } else {
      hash.update(typeof current === 'number' ? String(current) : JSON.stringify(current ?? null));
    }
  }
  return hash.digest('base64url');
}

/**
 * A language as a respondent's `language` takes it (a BCP 47 tag, as the contract's `LanguageTag`), from a looser
 * spelling such as SCIM's `preferredLanguage` (`en_US` becomes `en-US`); null when it is not one.
 */
export function languageTagOrNull(value: string | null | undefined): string | null {
  const tag = value?.trim().replace(/_/g, '-');
  return tag && tag.length <= 35 && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(tag) ? tag : null;
}

/** Keys sorted; built with fromEntries so that a key such as `__proto__` stays data (an assignment would drop it). */
function sortedAttributes(attributes: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!attributes) return {};
  return Object.fromEntries(
    Object.keys(attributes)
      .sort()
      .map((key) => [key, attributes[key]]),
  );
}

/** The stored shape of a valid record. E-mails are kept as sent; lookups compare them case-insensitively. */
export function normalize(input: RespondentInput): RespondentRow {
  const attributes = sortedAttributes(input.attributes as Record<string, unknown> | undefined);
  const attributesJson = JSON.stringify(attributes);
  const fields = [
    input.email ?? null,
    input.firstName ?? null,
    input.lastName ?? null,
    input.department ?? null,
    input.location ?? null,
    input.jobTitle ?? null,
    input.managerId ?? null,
    input.hireDate ?? null,
    input.employmentType ?? null,
  ] as const;
  const language = input.language ?? null;
  // A language joins the hash only when there is one, so records stored before respondents had languages keep
  // their hashes (a sync of the same records still writes nothing).
  const hash = createHash('sha1').update(JSON.stringify(fields)).update(attributesJson);
  if (language !== null) hash.update(`\0language:${language}`);
  const contentHash = hash.digest('base64url');
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
    language,
    attributesJson,
    contentHash,
  };
}
