/**
 * The bundled contract, loaded once, and what the HTTP layer derives from it: which operation a request is
 * for, and which scope that operation requires (its `security`). The document is the only place scopes are
 * written down.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { operations } from '../generated/openapi.js';

/** The operations a client can call; the document's `webhooks` (named `receive…Event`) are calls we make. */
export type OperationId = Exclude<keyof operations, `receive${string}`>;

export const contractPath = fileURLToPath(new URL('../../../openapi/bundled/openapi.json', import.meta.url));

interface OpenApiParameter {
  $ref?: string;
  name?: string;
  in?: string;
  schema?: { type?: string | string[] };
}

interface OpenApiOperation {
  operationId: OperationId;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
  parameters?: OpenApiParameter[];
  responses?: Record<string, { content?: Record<string, { schema?: OpenApiSchema }> }>;
}

interface OpenApiSchema {
  $ref?: string;
  properties?: Record<string, OpenApiSchema>;
  'x-shown-once'?: boolean;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  security?: Array<Record<string, string[]>>;
  [key: string]: unknown;
}

export interface OperationInfo {
  operationId: OperationId;
  method: string;
  /** The documented path template (`/api/v1/surveys/{id}`): what the access log records. */
  path: string;
  /** null: public (no key). Empty: any valid key. Otherwise every scope the key must grant (all of them). */
  requiredScopes: readonly string[] | null;
  /** Whether the operation takes a request body (and so may read one). */
  takesBody: boolean;
  /** Whether the body is required (express-openapi-validator does not enforce it for every method). */
  bodyRequired: boolean;
  /** Query parameters of type integer or number (`1e400` and `Infinity` must not reach a query as numbers). */
  numericQuery: string[];
  /**
   * Members of the success reply's `data` marked `x-shown-once` (a new API key, a webhook secret): they exist only
   * in the first reply and are never written to the idempotency store.
   */
  shownOnce: string[];
}

/** One documented path with its operations by method. */
export interface RouteInfo {
  path: string;
  matcher: RegExp;
  paramNames: string[];
  /** Literal segments, for the order of matching: `/respondents/sync` before `/respondents/{externalId}`. */
  literals: number;
  operations: Map<string, OperationInfo>;
  /** The `Allow` header of a 405. */
  allow: string;
}

const methods = ['get', 'put', 'post', 'patch', 'delete'] as const;

export function loadContract(): OpenApiDocument {
  return JSON.parse(readFileSync(contractPath, 'utf8')) as OpenApiDocument;
}

/**
 * One segment of a path parameter as it may appear on the wire: unreserved and sub-delimiter characters and
 * percent-escapes. Not `/`, and never a `.` or `..` segment (refused separately).
 */
const segment = "(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})+";

function numericQueryOf(document: OpenApiDocument, parameters: OpenApiParameter[]): string[] {
  const components =
    (document.components as { parameters?: Record<string, OpenApiParameter> } | undefined)?.parameters ?? {};
  return parameters
    .map((parameter) => (parameter.$ref ? components[parameter.$ref.split('/').pop()!] : parameter))
    .filter((parameter): parameter is OpenApiParameter => parameter?.in === 'query')
    .filter((parameter) => [parameter.schema?.type].flat().some((type) => type === 'integer' || type === 'number'))
    .map((parameter) => parameter.name!);
}

function shownOnceOf(document: OpenApiDocument, operation: OpenApiOperation): string[] {
  const schemas = (document.components as { schemas?: Record<string, OpenApiSchema> } | undefined)?.schemas ?? {};
  const resolved = (schema: OpenApiSchema | undefined) =>
    schema?.$ref ? schemas[schema.$ref.split('/').pop()!] : schema;
  const fields = new Set<string>();
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!status.startsWith('2')) continue;
    const data = resolved(resolved(response.content?.['application/json']?.schema)?.properties?.data);
    for (const [name, property] of Object.entries(data?.properties ?? {}))
      if (property['x-shown-once'] === true) fields.add(name);
  }
  return [...fields];
}

export function routesOf(document: OpenApiDocument): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const operations = new Map<string, OperationInfo>();
    const shared = ((item as { parameters?: OpenApiParameter[] }).parameters ?? []) as OpenApiParameter[];
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      const security = operation.security ?? document.security ?? [];
      const requirement = security[0];
      const scopes = requirement ? (requirement.bearerAuth ?? []) : null;
      operations.set(method.toUpperCase(), {
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        requiredScopes: scopes,
        takesBody: operation.requestBody !== undefined,
        bodyRequired: (operation.requestBody as { required?: boolean } | undefined)?.required === true,
        numericQuery: numericQueryOf(document, [...shared, ...(operation.parameters ?? [])]),
        shownOnce: shownOnceOf(document, operation),
      });
    }
    const paramNames = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    // Case-sensitive and exact: no trailing slash, no other spelling. Express is configured the same way
    // (case sensitive + strict routing), which is what express-openapi-validator matches with.
    const pattern = path
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? `(${segment})` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    routes.push({
      path,
      matcher: new RegExp(`^${pattern}$`),
      paramNames,
      literals: path.split('/').filter((part) => part && !part.startsWith('{')).length,
      operations,
      allow: [...operations.keys()].join(', '),
    });
  }
  return routes.sort((a, b) => b.literals - a.literals);
}

export type Resolution =
  | { kind: 'operation'; route: RouteInfo; operation: OperationInfo; params: Record<string, string> }
  | { kind: 'method_not_allowed'; route: RouteInfo }
  | { kind: 'not_found' };

/**
 * The one rule that decides which operation a request is for — authentication, body limits, the validator and
 * the handler all follow it. The raw path (before any decoding) must be spelled exactly as documented: other
 * letter case, a trailing or doubled slash, `.`/`..` segments (also percent-encoded) or an undecodable escape
 * are not found.
 */
export function resolve(routes: readonly RouteInfo[], method: string, rawPath: string): Resolution {
  if (/\/\/|\/\.\.?(\/|$)|\/(%2e|\.){1,2}(\/|$)/i.test(rawPath)) return { kind: 'not_found' };
  for (const route of routes) {
    const match = route.matcher.exec(rawPath);
    if (!match) continue;
    const params: Record<string, string> = {};
    for (const [index, name] of route.paramNames.entries()) {
      let value: string;
      try {
        value = decodeURIComponent(match[index + 1]!);
      } catch {
        return { kind: 'not_found' };
      }
      if (value === '.' || value === '..') return { kind: 'not_found' };
      params[name] = value;
    }
    const operation = route.operations.get(method);
    return operation ? { kind: 'operation', route, operation, params } : { kind: 'method_not_allowed', route };
  }
  return { kind: 'not_found' };
}

/** Every operation of the document (for tests and tooling). */
export function operationsOf(document: OpenApiDocument): OperationInfo[] {
  return routesOf(document).flatMap((route) => [...route.operations.values()]);
}
