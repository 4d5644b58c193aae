/**
 * Requests for every operation of the bundled document, generated with fast-check from the document itself:
 * valid values from each parameter's and body's JSON Schema, and mutations — wrong types, missing or unknown
 * fields, boundary and non-finite numbers, odd Unicode (NUL, lone surrogates, RTL, emoji), oversized values,
 * malformed JSON — under valid, narrow, other-environment, revoked, malformed or missing keys.
 */
import fc from 'fast-check';
import { contract } from '../helpers/raw-http.js';

type Schema = Record<string, unknown>;

export interface FuzzRequest {
  operationId: string;
  template: string;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: string;
  /** What was mutated, for the report. */
  mutation: string;
}

/** Real ids of fixtures, by path parameter name, so that requests also reach existing resources. */
export type Fixtures = Record<string, string[]>;
export type KeyKind = 'full' | 'narrow' | 'test' | 'revoked' | 'malformed' | 'none';
export type Keys = Record<Exclude<KeyKind, 'malformed' | 'none'>, string>;

const components = (
  contract as unknown as { components: { schemas: Record<string, Schema>; parameters: Record<string, Schema> } }
).components;

function deref(schema: unknown): Schema {
  let current = schema as Schema;
  for (let i = 0; i < 20 && current && typeof current.$ref === 'string'; i++) {
    const ref = current.$ref as string;
    const name = ref.split('/').pop()!;
    current = (ref.includes('/parameters/') ? components.parameters[name] : components.schemas[name]) as Schema;
  }
  return current ?? {};
}

const oddStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\u202eevil',
  '😀'.repeat(3),
  'ǅ',
  '../../etc/passwd',
  '%00',
  '%2e%2e%2f',
  "'; drop table surveys; --",
  '<script>alert(1)</script>',
  '${7*7}',
  '\\',
  '"',
  'null',
  'true',
  '0',
  '-1',
  '1e400',
  'Infinity',
  'NaN',
  'x'.repeat(3000),
  'é'.repeat(600),
  '\r\n',
  '\t',
  'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8',
  'SRV_01JD3M8Q4W6T9ZK2F7X1B5N0C8',
];
const oddNumbers = [
  0,
  -0,
  -1,
  1,
  0.5,
  -0.5,
  2 ** 31,
  2 ** 53,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  100,
  101,
  1000,
  10,
  11,
  255,
  256,
];
const oddString = fc.oneof(
  fc.constantFrom(...oddStrings),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 20 }),
);
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom(...oddNumbers),
  oddString,
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** An arbitrary of values valid for `schema` (as far as this converter understands it; the rest is best effort). */
export function valid(schemaIn: unknown, depth = 0): fc.Arbitrary<unknown> {
  const schema = deref(schemaIn);
  if (depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((alt) => valid(alt, depth + 1)));
  const types = [schema.type ?? (schema.properties ? 'object' : undefined)].flat().filter(Boolean) as string[];
  if (types.length > 1) return fc.oneof(...types.map((type) => valid({ ...schema, type }, depth + 1)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -1000;
      const max = typeof schema.maximum === 'number' ? schema.maximum : Math.max(min + 1000, 1000);
      return types[0] === 'integer'
        ? fc.integer({ min: Math.ceil(min), max: Math.floor(Math.min(max, 2 ** 31)) })
        : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'string':
      return validString(schema);
    case 'array': {
      const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxItems = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 4, minItems + 3);
      const items = valid(schema.items ?? {}, depth + 1);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength: minItems, maxLength: maxItems, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength: minItems, maxLength: maxItems });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = new Set((schema.required ?? []) as string[]);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = valid(property, depth + 1);
      if (
        Object.keys(properties).length === 0 &&
        schema.additionalProperties &&
        typeof schema.additionalProperties === 'object'
      ) {
        return fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/), valid(schema.additionalProperties, depth + 1), {
          maxKeys: 4,
        });
      }
      return fc.record(record, { requiredKeys: [...required].filter((key) => key in record) });
    }
    default:
      return anyJson;
  }
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 40, 60);
  switch (schema.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'date':
      return fc
        .date({ min: new Date('1950-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.stringMatching(/^[a-z]{1,8}@example\.com$/);
    case 'uri':
    case 'uri-reference':
      // Only loopback: the fuzz must never make the service send traffic elsewhere.
      return fc.constantFrom('http://127.0.0.1:9/hook', 'https://127.0.0.1:9/x', 'http://localhost:9/');
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((s) => s.length >= minLength && s.length <= Math.max(maxLength, minLength));
    } catch {
      /* fall through */
    }
  }
  return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
}

/** Replaces one value somewhere in `value` (by a random walk) with `replacement`, or drops/adds a member. */
function mutate(value: unknown, rng: fc.Arbitrary<number>): fc.Arbitrary<{ value: unknown; mutation: string }> {
  return fc
    .tuple(
      fc.array(rng, { minLength: 4, maxLength: 4 }),
      anyJson,
      fc.constantFrom('replace', 'drop', 'add', 'deep', 'huge'),
    )
    .map(([choices, replacement, kind]) => {
      const copy = structuredClone(value) as unknown;
      const containers: Array<{ holder: Record<string, unknown> | unknown[]; key: string | number; path: string }> = [];
      const collect = (node: unknown, path: string) => {
        if (Array.isArray(node))
          node.forEach(
            (item, i) => (
              containers.push({ holder: node, key: i, path: `${path}/${i}` }),
              collect(item, `${path}/${i}`)
            ),
          );
        else if (node && typeof node === 'object')
          for (const [k, v] of Object.entries(node)) {
            containers.push({ holder: node as Record<string, unknown>, key: k, path: `${path}/${k}` });
            collect(v, `${path}/${k}`);
          }
      };
      collect(copy, '');
      if (containers.length === 0 || !copy || typeof copy !== 'object')
        return { value: kind === 'huge' ? 'x'.repeat(70_000) : replacement, mutation: `body:${kind}` };
      const target = containers[choices[0]! % containers.length]!;
      switch (kind) {
        case 'replace':
          (target.holder as Record<string, unknown>)[target.key as string] = replacement;
          break;
        case 'drop':
          if (Array.isArray(target.holder)) target.holder.splice(target.key as number, 1);
          else delete target.holder[target.key as string];
          break;
        case 'add':
          if (!Array.isArray(target.holder))
            target.holder[oddStrings[choices[1]! % oddStrings.length]!.slice(0, 40) || 'unknown'] = replacement;
          break;
        case 'deep': {
          let nested: unknown = 1;
          for (let i = 0; i < 40 + (choices[2]! % 200); i++) nested = { a: nested };
          (target.holder as Record<string, unknown>)[target.key as string] = nested;
          break;
        }
        case 'huge':
          (target.holder as Record<string, unknown>)[target.key as string] = 'é'.repeat(2_000 + (choices[3]! % 40_000));
          break;
      }
      return { value: copy, mutation: `body:${kind}@${target.path}` };
    });
}

interface OperationShape {
  template: string;
  method: string;
  operationId: string;
  parameters: Schema[];
  body?: Schema;
}

export function operations(): OperationShape[] {
  const result: OperationShape[] = [];
  for (const [template, item] of Object.entries(contract.paths)) {
    const shared = ((item as { parameters?: unknown[] }).parameters ?? []).map(deref);
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue;
      const own = (operation.parameters ?? []).map(deref);
      const body = (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.[
        'application/json'
      ]?.schema;
      result.push({
        template,
        method: method.toUpperCase(),
        operationId: operation.operationId,
        parameters: [...shared, ...own],
        body,
      });
    }
  }
  return result;
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) is sent as the bytes UTF-8 would give it. */
function encode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const pair =
      code >= 0xd800 &&
      code <= 0xdbff &&
      i + 1 < text.length &&
      text.charCodeAt(i + 1) >= 0xdc00 &&
      text.charCodeAt(i + 1) <= 0xdfff;
    if (pair) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}

function encodeQuery(entries: Array<[string, string]>): string {
  return entries.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
}

export function requestFor(op: OperationShape, fixtures: Fixtures, keys: Keys): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const pathArb = fc.tuple(
    ...pathParams.map((p) => {
      const known = fixtures[p.name as string] ?? [];
      const options: Array<fc.Arbitrary<string>> = [oddString.map((s) => s || 'x'), valid(p.schema).map(String)];
      if (known.length > 0)
        options.push(fc.constantFrom(...known), fc.constantFrom(...known), fc.constantFrom(...known));
      return fc.oneof(...options);
    }),
  );
  const queryArb = fc
    .tuple(
      fc
        .subarray(queryParams)
        .chain((chosen) =>
          fc.tuple(
            ...chosen.map((p) =>
              fc.oneof(
                { weight: 3, arbitrary: valid(p.schema).map((v) => [p.name as string, String(v)] as [string, string]) },
                { weight: 1, arbitrary: oddString.map((s) => [p.name as string, s] as [string, string]) },
              ),
            ),
          ),
        ),
      fc.oneof(
        { weight: 5, arbitrary: fc.constant([] as Array<[string, string]>) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.constantFrom('unknown', 'page[a]', 'x', '__proto__', 'pageSize'), oddString)
            .map((e) => [e as [string, string]]),
        },
      ),
    )
    .map(([a, b]) => [...a, ...b]);
  const keyArb = fc.oneof(
    { weight: 12, arbitrary: fc.constant<KeyKind>('full') },
    { weight: 1, arbitrary: fc.constantFrom<KeyKind>('narrow', 'test', 'revoked', 'malformed', 'none') },
  );
  const bodyArb: fc.Arbitrary<{ text?: string; type?: string; mutation: string }> = op.body
    ? fc.oneof(
        { weight: 4, arbitrary: valid(op.body).map((v) => ({ text: JSON.stringify(v), mutation: 'valid' })) },
        {
          weight: 4,
          arbitrary: valid(op.body)
            .chain((v) => mutate(v, fc.nat()))
            .map(({ value, mutation }) => ({ text: JSON.stringify(value) ?? 'null', mutation })),
        },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom(
              '{',
              '{"a":1,}',
              '[1,2',
              'null',
              '"text"',
              '{"title":"\\ud800"}',
              '{"title":"\\u0000"}',
              '{"a":1e400}',
              '',
            )
            .map((text) => ({ text, mutation: 'body:malformed' })),
        },
        {
          weight: 1,
          arbitrary: valid(op.body).chain((v) =>
            fc
              .constantFrom('text/plain', 'application/json; charset=utf-16', 'application/xml', 'multipart/form-data')
              .map((type) => ({ text: JSON.stringify(v), type, mutation: `type:${type}` })),
          ),
        },
      )
    : fc.oneof(
        { weight: 9, arbitrary: fc.constant({ mutation: 'none' }) },
        { weight: 1, arbitrary: fc.constant({ text: '{"unexpected":true}', mutation: 'body:on-bodyless' }) },
      );
  return fc
    .tuple(pathArb, queryArb, keyArb, bodyArb, fc.option(fc.uuid(), { freq: 3 }))
    .map(([pathValues, query, keyKind, body, idempotencyKey]) => {
      let path = op.template;
      pathParams.forEach((p, i) => (path = path.replace(`{${p.name as string}}`, encode(pathValues[i]!))));
      const headers: Record<string, string> = {};
      if (keyKind === 'malformed') headers.authorization = 'Bearer svc_live_nothex';
      else if (keyKind !== 'none') headers.authorization = `Bearer ${keys[keyKind]}`;
      if (body.text !== undefined) headers['content-type'] = body.type ?? 'application/json';
      if (idempotencyKey && op.method === 'POST') headers['idempotency-key'] = idempotencyKey;
      return {
        operationId: op.operationId,
        template: op.template,
        method: op.method,
        path,
        query: encodeQuery(query),
        headers,
        body: body.text,
        mutation: `${body.mutation} key:${keyKind}`,
      };
    });
}
