/**
 * Shared helpers of the contract tests: the bundled document, a walk over its operations, and an Ajv instance
 * that knows the whole document so that `$ref`s (and JSON Pointers into it) resolve.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const bundlePath = join(root, 'openapi', 'bundled', 'openapi.json');

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose `default` is the plugin.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function loadDocument(): JsonObject {
  return JSON.parse(readFileSync(bundlePath, 'utf8')) as JsonObject;
}

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface Operation {
  /** `paths` or `webhooks`. */
  section: 'paths' | 'webhooks';
  path: string;
  method: string;
  pointer: string;
  operation: JsonObject;
  /** Path-item level parameters followed by the operation's own, `$ref`s resolved. */
  parameters: JsonObject[];
}

/** Escapes one JSON Pointer segment (RFC 6901). */
export const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows a local `$ref` (`#/…`) inside the document; anything else is returned as is. */
export function deref(doc: JsonObject, value: Json | undefined): Json | undefined {
  let current = value;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string' && hops < 20; hops++) {
    const ref: string = current.$ref;
    if (!ref.startsWith('#/')) return current;
    let target: Json | undefined = doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) ? target[key] : Array.isArray(target) ? target[Number(key)] : undefined;
    }
    current = target;
  }
  return current;
}

export function operations(doc: JsonObject, section: 'paths' | 'webhooks' = 'paths'): Operation[] {
  const result: Operation[] = [];
  const items = doc[section];
  if (!isObject(items)) return result;
  for (const [path, rawItem] of Object.entries(items)) {
    const item = deref(doc, rawItem);
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const own = Array.isArray(operation.parameters) ? operation.parameters : [];
      const parameters = [...shared, ...own].map((p) => deref(doc, p)).filter(isObject);
      result.push({
        section,
        path,
        method,
        pointer: `#/${section}/${escapePointer(path)}/${method}`,
        operation,
        parameters,
      });
    }
  }
  return result;
}

export const DOCUMENT_ID = 'openapi.json';

/** Ajv 2020 with formats, the whole document registered as `openapi.json`; OpenAPI-only keywords are allowed. */
export function createAjv(doc: JsonObject) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(doc as object, DOCUMENT_ID);
  return ajv;
}
