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

interface OpenApiOperation {
  operationId: OperationId;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  security?: Array<Record<string, string[]>>;
  [key: string]: unknown;
}

export interface OperationInfo {
  operationId: OperationId;
  method: string;
  path: string;
  /** null: public (no key). Empty: any valid key. Otherwise the scope the key must grant. */
  requiredScope: string | null | '';
  matcher: RegExp;
}

const methods = ['get', 'put', 'post', 'patch', 'delete'] as const;

export function loadContract(): OpenApiDocument {
  return JSON.parse(readFileSync(contractPath, 'utf8')) as OpenApiDocument;
}

export function operationsOf(document: OpenApiDocument): OperationInfo[] {
  const result: OperationInfo[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      const security = operation.security ?? document.security ?? [];
      const requirement = security[0];
      const scopes = requirement ? (requirement.bearerAuth ?? []) : null;
      const pattern = path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+');
      result.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        requiredScope: scopes === null ? null : (scopes[0] ?? ''),
        matcher: new RegExp(`^${pattern}/?$`),
      });
    }
  }
  // Literal segments win over templated ones (`/respondents/sync` before `/respondents/{externalId}`).
  return result.sort((a, b) => templateCount(a.path) - templateCount(b.path));
}

function templateCount(path: string): number {
  return (path.match(/\{/g) ?? []).length;
}

export function findOperation(table: readonly OperationInfo[], method: string, path: string): OperationInfo | undefined {
  return table.find((op) => op.method === method && op.matcher.test(path));
}
