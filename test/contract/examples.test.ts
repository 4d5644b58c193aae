/**
 * Every example in the contract validates against the schema it illustrates: media-type `examples`/`example`
 * (requests, responses, webhooks), parameter and header examples, and schema `examples`/`example`. An example
 * that drifts from its schema would mislead integrators and break the SDK's docs, so this is a hard failure.
 */
import { describe, expect, it } from 'vitest';
import type { ValidateFunction } from 'ajv';
import { DOCUMENT_ID, createAjv, deref, escapePointer, isObject, loadDocument, type Json } from './document.js';

interface Case {
  /** Where the example lives (JSON Pointer into the bundled document). */
  where: string;
  /** JSON Pointer of the schema it must satisfy. */
  schemaPointer: string;
  value: Json;
}

const doc = loadDocument();

// Keywords whose value is one subschema, a list of subschemas, or a map of subschemas (JSON Schema 2020-12).
const ONE = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

function collectSchemaExamples(schema: Json | undefined, pointer: string, cases: Case[]) {
  if (!isObject(schema)) return;
  if (Array.isArray(schema.examples)) {
    schema.examples.forEach((value, i) =>
      cases.push({ where: `${pointer}/examples/${i}`, schemaPointer: pointer, value }),
    );
  }
  if ('example' in schema)
    cases.push({ where: `${pointer}/example`, schemaPointer: pointer, value: schema.example ?? null });
  for (const key of ONE) collectSchemaExamples(schema[key], `${pointer}/${key}`, cases);
  for (const key of LIST) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((sub, i) => collectSchemaExamples(sub, `${pointer}/${key}/${i}`, cases));
  }
  for (const key of MAP) {
    const map = schema[key];
    if (isObject(map)) {
      for (const [name, sub] of Object.entries(map))
        collectSchemaExamples(sub, `${pointer}/${key}/${escapePointer(name)}`, cases);
    }
  }
}

/**
 * Walks everything that is not a schema. An object with a `schema` member is a media type, a parameter or a
 * header: its `example` and named `examples` must satisfy that schema. Example values are never walked into.
 */
function collect(node: Json | undefined, pointer: string, cases: Case[]) {
  if (Array.isArray(node)) {
    node.forEach((item, i) => collect(item, `${pointer}/${i}`, cases));
    return;
  }
  if (!isObject(node)) return;
  if ('schema' in node) {
    const schemaPointer = `${pointer}/schema`;
    if ('example' in node) cases.push({ where: `${pointer}/example`, schemaPointer, value: node.example ?? null });
    if (isObject(node.examples)) {
      for (const [name, raw] of Object.entries(node.examples)) {
        const example = deref(doc, raw);
        if (isObject(example) && 'value' in example) {
          cases.push({
            where: `${pointer}/examples/${escapePointer(name)}`,
            schemaPointer,
            value: example.value ?? null,
          });
        }
      }
    }
    collectSchemaExamples(node.schema, schemaPointer, cases);
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'schema' || key === 'example' || key === 'examples') continue;
    if (pointer === '#/components' && key === 'schemas' && isObject(value)) {
      for (const [name, schema] of Object.entries(value)) {
        collectSchemaExamples(schema, `#/components/schemas/${escapePointer(name)}`, cases);
      }
      continue;
    }
    collect(value, `${pointer}/${escapePointer(key)}`, cases);
  }
}

const cases: Case[] = [];
collect(doc, '#', cases);

const ajv = createAjv(doc);
const validators = new Map<string, ValidateFunction>();
function validatorFor(pointer: string): ValidateFunction {
  const known = validators.get(pointer);
  if (known) return known;
  {
    // A pointer is a URI fragment here: percent-encode each segment (paths contain `{` and `}`).
    const fragment = pointer
      .slice(1)
      .split('/')
      .map((segment) => encodeURIComponent(segment))
      .join('/');
    const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${fragment}` });
    validators.set(pointer, validate);
    return validate;
  }
}

describe('examples of the contract', () => {
  it('finds the examples (sanity check of the walk)', () => {
    expect(cases.length).toBeGreaterThan(100);
    expect(cases.some((c) => c.where.includes('/requestBody/'))).toBe(true);
    expect(cases.some((c) => c.where.includes('/responses/'))).toBe(true);
    expect(cases.some((c) => c.where.startsWith('#/components/schemas/'))).toBe(true);
    expect(cases.some((c) => c.where.startsWith('#/webhooks/'))).toBe(true);
  });

  it('rejects what breaks a schema (sanity check of the validator)', () => {
    const meta = validatorFor('#/components/schemas/Meta');
    expect(
      meta({ requestId: 'req_01JD3M8Q4W6T9ZK2F7X1B5N0C8', timestamp: '2026-11-22T09:30:00.000Z', apiVersion: 'v1' }),
    ).toBe(true);
    expect(meta({ requestId: 'req_01JD3M8Q4W6T9ZK2F7X1B5N0C8', timestamp: 'yesterday', apiVersion: 'v1' })).toBe(false);
    expect(
      meta({
        requestId: 'req_01JD3M8Q4W6T9ZK2F7X1B5N0C8',
        timestamp: '2026-11-22T09:30:00.000Z',
        apiVersion: 'v1',
        extra: 1,
      }),
    ).toBe(false);
  });

  it.each(cases.map((c) => [c.where, c] as const))('%s is valid', (_where, c) => {
    const validate = validatorFor(c.schemaPointer);
    const valid = validate(c.value);
    expect(
      valid ? [] : validate.errors?.map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`),
    ).toEqual([]);
  });
});
