/**
 * PATCH (RFC 7644 §3.5.2) applied to one user as SCIM renders it: the operations run in order on that document, and
 * the result is read back like a PUT body, so a PATCH can produce nothing a PUT could not. Paths name the attributes
 * the service keeps (case-insensitively; extension attributes with their URN), optionally through a value filter on
 * `emails` (`emails[type eq "work"].value`), parsed by `scim2-parse-filter` and matched against that user's values.
 */
import scimFilter from 'scim2-parse-filter';
import { coreSchema, enterpriseSchema, ownSchema } from './attributes.js';
import { invalidPath, invalidValue, mutability, noTarget } from './errors.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Attributes a path may name, by schema, with their sub-attributes (null: a simple attribute). */
const known: Record<string, Record<string, readonly string[] | null>> = {
  core: {
    externalId: null,
    userName: null,
    name: ['givenName', 'familyName', 'formatted'],
    displayName: null,
    emails: ['value', 'type', 'primary', 'display'],
    title: null,
    active: null,
    preferredLanguage: null,
    id: null,
    meta: ['resourceType', 'created', 'lastModified', 'location', 'version'],
    schemas: null,
  },
  [enterpriseSchema]: { department: null, employeeNumber: null, manager: ['value', 'displayName', '$ref'] },
  [ownSchema]: { location: null, hireDate: null, employmentType: null, attributes: [] },
};

interface Target {
  container: Json;
  attr: string;
  filter?: ReturnType<typeof scimFilter.parse>;
  sub?: string;
  /** The filter as written, for messages. */
  path: string;
}

function canonical(names: Record<string, unknown>, name: string): string | undefined {
  return Object.keys(names).find((key) => key.toLowerCase() === name.toLowerCase());
}

/** Resolves a path to its container in `doc`, the canonical attribute, the value filter and the sub-attribute. */
function resolvePath(doc: Json, path: string): Target {
  const shown = path.slice(0, 200);
  let rest = path;
  let schema = 'core';
  for (const urn of [enterpriseSchema, ownSchema, coreSchema]) {
    if (rest.toLowerCase().startsWith(`${urn.toLowerCase()}:`)) {
      schema = urn === coreSchema ? 'core' : urn;
      rest = rest.slice(urn.length + 1);
      break;
    }
  }
  let filterText: string | undefined;
  let sub: string | undefined;
  const open = rest.indexOf('[');
  if (open !== -1) {
    const close = rest.lastIndexOf(']');
    if (close < open) throw invalidPath(`The path ${shown} has an unclosed value filter.`);
    filterText = rest.slice(open + 1, close);
    const after = rest.slice(close + 1);
    if (after !== '' && !/^\.[^.]+$/.test(after)) throw invalidPath(`The path ${shown} is not a SCIM attribute path.`);
    sub = after ? after.slice(1) : undefined;
    rest = rest.slice(0, open);
  } else {
    const dot = rest.indexOf('.');
    if (dot !== -1) {
      sub = rest.slice(dot + 1);
      rest = rest.slice(0, dot);
    }
  }
  const attributes = known[schema]!;
  const attr = canonical(attributes, rest);
  if (!attr) throw invalidPath(`The path ${shown} names no attribute the service keeps.`);
  if (schema === 'core' && (attr === 'id' || attr === 'meta' || attr === 'schemas'))
    throw mutability(`${attr} is set by the service and cannot be changed.`);
  const subs = attributes[attr];
  let subName: string | undefined;
  if (sub !== undefined) {
    if (subs === null || subs === undefined) throw invalidPath(`${attr} has no sub-attribute ${sub.slice(0, 100)}.`);
    // Custom attributes take any key.
    subName = subs.length === 0 ? sub : canonical(Object.fromEntries(subs.map((s) => [s, true])), sub);
    if (!subName) throw invalidPath(`${attr} has no sub-attribute ${sub.slice(0, 100)}.`);
  }
  if (filterText !== undefined && attr !== 'emails')
    throw invalidPath(`Only emails takes a value filter, not ${attr}.`);
  let filter: Target['filter'];
  if (filterText !== undefined) {
    try {
      filter = scimFilter.parse(filterText);
    } catch {
      throw invalidPath(`The value filter of ${shown} is not valid SCIM.`);
    }
  }
  const container = schema === 'core' ? doc : ((doc[schema] = isObject(doc[schema]) ? doc[schema] : {}) as Json);
  return { container, attr, ...(filter ? { filter } : {}), ...(subName ? { sub: subName } : {}), path: shown };
}

/** The value an element of a multi-valued attribute gets from `type eq "work"`-like filters when it is created. */
function seedOf(filter: Target['filter']): Json | undefined {
  if (filter && filter.op === 'eq' && 'attrPath' in filter && typeof filter.compValue !== 'object')
    return { [filter.attrPath]: filter.compValue };
  return undefined;
}

function matcher(filter: NonNullable<Target['filter']>): (entry: unknown) => boolean {
  const test = scimFilter.filter(filter);
  return (entry) => isObject(entry) && test(entry);
}

function setValue(target: Target, value: unknown, op: 'add' | 'replace'): void {
  const { container, attr, filter, sub } = target;
  const current = container[attr];
  if (attr === 'emails') {
    const list = Array.isArray(current) ? current : [];
    if (filter) {
      const matches = list.filter(matcher(filter));
      if (matches.length === 0) {
        // RFC 7644 §3.5.2.3: a replace whose value filter matches nothing fails; an add creates the value it names.
        const seed = op === 'add' ? seedOf(filter) : undefined;
        if (!seed) throw noTarget(`No value of ${target.path} matches its filter.`);
        list.push(sub ? { ...seed, [sub]: value } : { ...seed, ...(isObject(value) ? value : {}) });
      } else {
        for (const entry of matches as Json[]) {
          if (sub) entry[sub] = value;
          else if (isObject(value)) Object.assign(entry, value);
          else throw invalidValue(`${target.path} takes an object.`);
        }
      }
      container[attr] = list;
    } else if (sub) {
      if (list.length === 0) list.push({ [sub]: value });
      for (const entry of list) if (isObject(entry)) entry[sub] = value;
      container[attr] = list;
    } else {
      const values = Array.isArray(value) ? value : [value];
      if (op === 'replace') container[attr] = values;
      else {
        // RFC 7644 §3.5.2.1: an address the user has already (same value and type) is updated, not repeated.
        for (const added of values) {
          const same = isObject(added) ? list.find((entry) => sameAddress(entry, added)) : undefined;
          if (same) Object.assign(same, added);
          else list.push(added);
        }
        container[attr] = list;
      }
    }
    return;
  }
  if (sub) {
    const object = isObject(current) ? current : {};
    object[sub] = value;
    container[attr] = object;
  } else if (isObject(value) && isObject(current)) {
    container[attr] = { ...current, ...value };
  } else {
    container[attr] = value;
  }
}

const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

function sameAddress(entry: unknown, added: Json): boolean {
  if (!isObject(entry)) return false;
  const field = (object: Json, name: string) => object[canonical(object, name) ?? name];
  return (
    lower(field(entry, 'value')) === lower(field(added, 'value')) &&
    lower(field(entry, 'type')) === lower(field(added, 'type'))
  );
}

/** `primary` as a client may send it: true, or the string "true" in any case (Entra ID). */
function isPrimary(entry: unknown): boolean {
  if (!isObject(entry)) return false;
  const primary = entry[canonical(entry, 'primary') ?? 'primary'];
  return primary === true || (typeof primary === 'string' && primary.toLowerCase() === 'true');
}

/**
 * RFC 7644 §3.5.2: an operation that makes an address primary makes every other one not primary. `before` is
 * whether each address was primary before the operation (by identity: operations change addresses in place).
 */
function onePrimary(doc: Json, before: ReadonlyMap<unknown, boolean>): void {
  const list = doc.emails;
  if (!Array.isArray(list)) return;
  const madePrimary = list.filter((entry) => isPrimary(entry) && before.get(entry) !== true);
  if (madePrimary.length === 0) return;
  for (const entry of list)
    if (isObject(entry) && !madePrimary.includes(entry)) entry[canonical(entry, 'primary') ?? 'primary'] = false;
}

function removeValue(target: Target): void {
  const { container, attr, filter, sub } = target;
  const current = container[attr];
  if (filter) {
    const list = Array.isArray(current) ? current : [];
    const matches = list.filter(matcher(filter));
    if (matches.length === 0) throw noTarget(`No value of ${target.path} matches its filter.`);
    container[attr] = sub
      ? list.map((entry) => {
          if (!matches.includes(entry)) return entry;
          const copy = { ...(entry as Json) };
          delete copy[sub];
          return copy;
        })
      : list.filter((entry) => !matches.includes(entry));
    return;
  }
  if (sub) {
    if (Array.isArray(current)) {
      for (const entry of current) if (isObject(entry)) delete entry[sub];
    } else if (isObject(current)) {
      delete current[sub];
    }
    return;
  }
  delete container[attr];
}

/** Applies the PATCH operations to `doc` (a rendered user) in place. */
export function applyPatch(doc: Json, operations: readonly unknown[]): void {
  for (const [index, operation] of operations.entries()) {
    if (!isObject(operation)) throw invalidValue(`Operations[${index}] must be an object.`);
    const emails = Array.isArray(doc.emails) ? (doc.emails as unknown[]) : [];
    const wasPrimary = new Map(emails.map((entry) => [entry, isPrimary(entry)]));
    applyOperation(doc, operation, index);
    onePrimary(doc, wasPrimary);
  }
}

function applyOperation(doc: Json, operation: Json, index: number): void {
  const opName = Object.entries(operation).find(([key]) => key.toLowerCase() === 'op')?.[1];
  const op = typeof opName === 'string' ? opName.toLowerCase() : undefined;
  if (op !== 'add' && op !== 'replace' && op !== 'remove')
    throw invalidValue(`Operations[${index}].op must be add, replace or remove.`);
  const path = Object.entries(operation).find(([key]) => key.toLowerCase() === 'path')?.[1];
  const value = Object.entries(operation).find(([key]) => key.toLowerCase() === 'value')?.[1];
  if (path !== undefined && typeof path !== 'string') throw invalidPath(`Operations[${index}].path must be a string.`);
  if (op === 'remove') {
    if (!path) throw noTarget(`Operations[${index}]: remove needs a path.`);
    removeValue(resolvePath(doc, path));
    return;
  }
  if (value === undefined) throw invalidValue(`Operations[${index}]: ${op} needs a value.`);
  if (path) {
    setValue(resolvePath(doc, path), value, op);
    return;
  }
  // No path: the value's members are attributes (or, as Entra ID sends them, paths such as `name.givenName`).
  if (!isObject(value)) throw invalidValue(`Operations[${index}]: without a path, value must be an object.`);
  for (const [key, member] of Object.entries(value)) {
    const extension = [enterpriseSchema, ownSchema].find((urn) => urn.toLowerCase() === key.toLowerCase());
    if (extension && isObject(member)) {
      for (const [subKey, subValue] of Object.entries(member))
        setValue(resolvePath(doc, `${extension}:${subKey}`), subValue, op);
    } else if (key.toLowerCase() !== 'schemas') {
      setValue(resolvePath(doc, key), member, op);
    }
  }
}
