/**
 * The HTTP layer knows no operation by name: what an operation needs of the pipeline (its scopes, whether it takes a
 * body, which reply members are shown once and never stored for replays) is read from the contract. The module
 * boundaries themselves are dependency-cruiser's (`.dependency-cruiser.cjs`, run by `npm run lint`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadContract, routesOf } from '../../server/src/http/contract.js';

const httpDirectory = path.resolve(import.meta.dirname, '../../server/src/http');

describe('the HTTP layer', () => {
  const routes = routesOf(loadContract());
  const operations = routes.flatMap((route) => [...route.operations.values()]);

  it('names no operation of the contract', () => {
    expect(operations.length).toBeGreaterThan(50);
    const named: string[] = [];
    for (const file of readdirSync(httpDirectory).filter((name) => name.endsWith('.ts'))) {
      const text = readFileSync(path.join(httpDirectory, file), 'utf8');
      for (const { operationId } of operations)
        if (new RegExp(`\\b${operationId}\\b`).test(text)) named.push(`${file}: ${operationId}`);
    }
    expect(named).toEqual([]);
  });

  it('finds the members shown once (never kept for replays) in the contract', () => {
    const shownOnce = Object.fromEntries(
      operations.filter((operation) => operation.shownOnce.length > 0).map((o) => [o.operationId, o.shownOnce]),
    );
    expect(shownOnce).toEqual({
      createApiKey: ['key'],
      createWebhook: ['secret'],
      rotateWebhookSecret: ['secret'],
    });
  });
});
