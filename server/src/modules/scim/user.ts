/**
 * A User as SCIM shows it (rendered from the respondent and its SCIM row) and as a client sends it (read into the
 * respondent's fields and the SCIM row's). Attribute names are matched case-insensitively; booleans also as the
 * strings "true"/"false" in any case, which Microsoft Entra ID sends (SCIM only: the API never coerces bodies).
 *
 * E-mail addresses: the SCIM row keeps every one a client sends, with its `type` and `primary`; the respondent keeps
 * the designated one (`designatedEmail`) as its `email`, the address distributions use, or none.
 */
import formatsModule from 'ajv-formats/dist/formats.js';
import type { RespondentUpsert as RespondentFields, ScimUser } from '../../generated/openapi.js';
import { coreSchema, enterpriseSchema, ownSchema } from './attributes.js';
import { languageTagOrNull, type ProfileRow } from '../respondents/index.js';
import { invalidValue } from './errors.js';
import type { ScimEmail } from './tables.js';

export type { RespondentFields, ScimUser };

// The contract's `format: email` (ajv-formats' full mode), which the respondent's `email` is checked against too:
// every address a user keeps passes the check that the designated one must pass.
const emailFormat = (formatsModule as unknown as { fullFormats: { email: RegExp } }).fullFormats.email;

/** A user joined with its respondent, as the repository reads it. */
export interface StoredUser extends ProfileRow {
  id: string;
  external_id: string;
  user_name: string;
  active: boolean;
  preferred_language: string | null;
  employee_number: string | null;
  created_at: Date;
  last_modified: Date;
  version: string;
  /** The designated one is the respondent's `email`, kept in step by triggers (migration 2026-11-29T0600). */
  emails: ScimEmail[];
}

/** What a client's User says, in the shapes the respondent and the SCIM row keep. */
export interface UserInput {
  id?: string;
  userName: string;
  externalId?: string;
  active: boolean;
  preferredLanguage: string | null;
  employeeNumber: string | null;
  emails: ScimEmail[];
  respondent: Omit<RespondentFields, 'externalId'>;
}

export const weakEtag = (version: string) => `W/"${version}"`;

/** An address as SCIM shows it, members in a fixed order. */
const renderEmail = (email: ScimEmail) => ({
  value: email.value,
  ...(email.type !== undefined ? { type: email.type } : {}),
  primary: email.primary,
  ...(email.display !== undefined ? { display: email.display } : {}),
});

/**
 * The address the respondent keeps, of a user's addresses: the primary one, else the first of type `work` (any
 * case), else the first; undefined for none. `scim_designated_email` (sql/10_scim_designated_email.sql) decides the
 * same in SQL.
 */
export function designatedEmail(emails: readonly ScimEmail[]): ScimEmail | undefined {
  return (
    emails.find((email) => email.primary) ?? emails.find((email) => email.type?.toLowerCase() === 'work') ?? emails[0]
  );
}

export function render(row: StoredUser, location: string): ScimUser {
  const enterprise: Record<string, unknown> = {};
  if (row.department !== null) enterprise.department = row.department;
  if (row.employee_number !== null) enterprise.employeeNumber = row.employee_number;
  if (row.manager_id !== null) enterprise.manager = { value: row.manager_id };
  const own: Record<string, unknown> = {};
  if (row.location !== null) own.location = row.location;
  if (row.hire_date !== null) own.hireDate = row.hire_date;
  if (row.employment_type !== null) own.employmentType = row.employment_type;
  if (Object.keys(row.attributes).length > 0) own.attributes = row.attributes;
  const name: Record<string, string> = {};
  if (row.first_name !== null) name.givenName = row.first_name;
  if (row.last_name !== null) name.familyName = row.last_name;
  const user: Record<string, unknown> = {
    schemas: [
      coreSchema,
      ...(Object.keys(enterprise).length ? [enterpriseSchema] : []),
      ...(Object.keys(own).length ? [ownSchema] : []),
    ],
    id: row.id,
    externalId: row.external_id,
    userName: row.user_name,
    ...(Object.keys(name).length ? { name } : {}),
    ...(row.emails.length > 0 ? { emails: row.emails.map(renderEmail) } : {}),
    ...(row.job_title !== null ? { title: row.job_title } : {}),
    active: row.active,
    ...(row.preferred_language !== null ? { preferredLanguage: row.preferred_language } : {}),
    ...(Object.keys(enterprise).length ? { [enterpriseSchema]: enterprise } : {}),
    ...(Object.keys(own).length ? { [ownSchema]: own } : {}),
    meta: {
      resourceType: 'User',
      created: row.created_at.toISOString(),
      lastModified: row.last_modified.toISOString(),
      location,
      version: weakEtag(row.version),
    },
  };
  return user as ScimUser;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The member of `object` named `name` in any letter case. */
export function member(object: Json, name: string): unknown {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(object)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/** A boolean, or the strings "true"/"false" in any case (Entra ID). */
export function lenientBoolean(value: unknown, path: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue(`${path} must be a boolean.`);
}

function text(value: unknown, path: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidValue(`${path} must be a string.`);
  if (value.length > max) throw invalidValue(`${path} must be at most ${max} characters.`);
  return value;
}

const calendarDate = /^(\d{4})-(\d{2})-(\d{2})/;
const scimDateTime = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/**
 * `hireDate`: a date (`YYYY-MM-DD`), or a SCIM dateTime (xsd:dateTime with a zone, RFC 7643 §2.3.5) as HR systems
 * and identity providers send it, kept as its date in UTC (`2008-01-23T23:30:00-02:00` is 2008-01-24). Whether a
 * plain date exists is the respondents writer's check, as for every other path.
 */
function hireDateOf(value: unknown): string | null {
  const given = text(value, 'hireDate', 40);
  if (given === null || given.length <= 10) return given;
  const [, year, month, day] = calendarDate.exec(given) ?? [];
  const existing =
    year !== undefined &&
    new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))).toISOString().slice(0, 10) ===
      `${year}-${month}-${day}`;
  if (!scimDateTime.test(given) || !existing)
    throw invalidValue('hireDate must be a date (YYYY-MM-DD) or a SCIM dateTime such as 2008-01-23T04:56:22Z.');
  return new Date(given).toISOString().slice(0, 10);
}

function object(value: unknown, path: string): Json {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalidValue(`${path} must be an object.`);
  return value;
}

/**
 * `emails`: every address with its `type`, `primary` and `display`. An entry without a value names no address and is
 * left out; at most one may be primary (RFC 7643 §2.4).
 */
function emailsOf(value: unknown): ScimEmail[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidValue('emails must be an array.');
  const emails: ScimEmail[] = [];
  for (const [index, entry] of value.entries()) {
    const email = object(entry, `emails[${index}]`);
    const address = text(member(email, 'value'), `emails[${index}].value`, 320);
    const type = text(member(email, 'type'), `emails[${index}].type`, 64);
    const display = text(member(email, 'display'), `emails[${index}].display`, 320);
    const primary = member(email, 'primary');
    if (address === null || address === '') continue;
    if (!emailFormat.test(address)) throw invalidValue(`emails[${index}].value must be an e-mail address.`);
    emails.push({
      value: address,
      ...(type !== null ? { type } : {}),
      primary: primary === undefined || primary === null ? false : lenientBoolean(primary, `emails[${index}].primary`),
      ...(display !== null ? { display } : {}),
    });
  }
  if (emails.filter((email) => email.primary).length > 1)
    throw invalidValue('emails: at most one address may be primary.');
  return emails;
}

/** The manager: `{ value }`, or the bare value Entra ID sends in a PATCH. */
function managerOf(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : text(value, 'manager.value', 255);
  const manager = object(value, 'manager');
  const id = text(member(manager, 'value'), 'manager.value', 255);
  return id === '' ? null : id;
}

/** A User body read into the respondent's fields and the SCIM row's; every problem is 400 invalidValue. */
export function readUser(body: unknown): UserInput {
  const user = object(body, 'The user');
  const userName = text(member(user, 'userName'), 'userName', 255);
  if (userName === null || userName.trim() === '') throw invalidValue('userName is required and may not be empty.');
  const externalIdValue = member(user, 'externalId');
  const externalId = text(externalIdValue, 'externalId', 255);
  if (externalId === '') throw invalidValue('externalId may not be empty.');
  const idValue = member(user, 'id');
  const name = object(member(user, 'name'), 'name');
  const enterprise = object(member(user, enterpriseSchema), enterpriseSchema);
  const own = object(member(user, ownSchema), ownSchema);
  const activeValue = member(user, 'active');
  // RFC 7643 requires no address: a person without one is reached by link, QR code or kiosk code.
  const emails = emailsOf(member(user, 'emails'));
  const attributes = member(own, 'attributes');
  const respondent: UserInput['respondent'] = {
    email: designatedEmail(emails)?.value ?? null,
    firstName: text(member(name, 'givenName'), 'name.givenName', 200),
    lastName: text(member(name, 'familyName'), 'name.familyName', 200),
    jobTitle: text(member(user, 'title'), 'title', 200),
    department: text(member(enterprise, 'department'), 'department', 200),
    managerId: managerOf(member(enterprise, 'manager')),
    location: text(member(own, 'location'), 'location', 200),
    hireDate: hireDateOf(member(own, 'hireDate')),
    employmentType: text(member(own, 'employmentType'), 'employmentType', 20) as RespondentFields['employmentType'],
    language: languageTagOrNull(text(member(user, 'preferredLanguage'), 'preferredLanguage', 64)),
  };
  if (attributes !== undefined && attributes !== null)
    respondent.attributes = object(attributes, 'attributes') as never;
  return {
    ...(typeof idValue === 'string' ? { id: idValue } : {}),
    userName,
    ...(externalId !== null ? { externalId } : {}),
    active: activeValue === undefined || activeValue === null ? true : lenientBoolean(activeValue, 'active'),
    preferredLanguage: text(member(user, 'preferredLanguage'), 'preferredLanguage', 64),
    employeeNumber: text(member(enterprise, 'employeeNumber'), 'employeeNumber', 255),
    emails,
    respondent,
  };
}

/** `attributes` / `excludedAttributes` applied to a rendered user; `id` and `schemas` always stay. */
export function project(user: ScimUser, attributes?: string, excluded?: string): ScimUser {
  const split = (list: string) =>
    list
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  if (attributes) {
    const wanted = split(attributes);
    const out: Json = { schemas: user.schemas, id: user.id };
    for (const path of wanted) copyPath(user as Json, out, path);
    return out as ScimUser;
  }
  if (excluded) {
    const out = structuredClone(user) as Json;
    for (const path of split(excluded)) removePath(out, path);
    out.schemas = user.schemas;
    out.id = user.id;
    return out as ScimUser;
  }
  return user;
}

/** Splits `urn:…:User:manager.value` into the container key (an extension's URN or none) and the dotted rest. */
function locate(path: string): { urn?: string; parts: string[] } {
  for (const urn of [enterpriseSchema, ownSchema, coreSchema]) {
    if (path.toLowerCase() === urn.toLowerCase()) return { urn: urn === coreSchema ? undefined : urn, parts: [] };
    if (path.toLowerCase().startsWith(`${urn.toLowerCase()}:`))
      return { urn: urn === coreSchema ? undefined : urn, parts: path.slice(urn.length + 1).split('.') };
  }
  return { parts: path.split('.') };
}

function keyIn(object: Json, name: string): string | undefined {
  return Object.keys(object).find((key) => key.toLowerCase() === name.toLowerCase());
}

function copyPath(from: Json, to: Json, path: string): void {
  const { urn, parts } = locate(path);
  let source: unknown = from;
  let target: Json = to;
  if (urn) {
    source = from[urn];
    if (!isObject(source)) return;
    target = (to[urn] ??= {}) as Json;
    if (parts.length === 0) {
      Object.assign(target, structuredClone(source));
      return;
    }
  }
  for (const [index, part] of parts.entries()) {
    if (!isObject(source)) return;
    const key = keyIn(source, part);
    if (key === undefined) return;
    if (index === parts.length - 1) target[key] = structuredClone(source[key]);
    else {
      source = source[key];
      if (Array.isArray(source)) {
        const rest = parts.slice(index + 1);
        target[key] = source.map((entry) => {
          const item: Json = {};
          if (isObject(entry)) copyPath(entry, item, rest.join('.'));
          return item;
        });
        return;
      }
      target = (target[key] ??= {}) as Json;
    }
  }
}

function removePath(object: Json, path: string): void {
  const { urn, parts } = locate(path);
  let at: unknown = urn ? object[urn] : object;
  if (urn && parts.length === 0) {
    delete object[urn];
    return;
  }
  for (const [index, part] of parts.entries()) {
    if (!isObject(at)) return;
    const key = keyIn(at, part);
    if (key === undefined) return;
    if (index === parts.length - 1) delete at[key];
    else at = at[key];
  }
}
