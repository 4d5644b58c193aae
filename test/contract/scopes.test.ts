/**
 * A key may hold every scope: each list of scopes in the contract admits as many items as there are scopes, so that
 * adding a scope never makes a key that has them all unanswerable (its `GET /me` failing response validation).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const bundle = JSON.parse(readFileSync('openapi/bundled/openapi.json', 'utf8')) as {
  components: { schemas: Record<string, unknown> };
};

/** Every array in the document whose items are a Scope, with where it is. */
function scopeLists(node: unknown, at: string, out: Array<{ at: string; maxItems?: number }>) {
  if (Array.isArray(node)) node.forEach((child, i) => scopeLists(child, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    const object = node as Record<string, unknown>;
    const items = object.items as { $ref?: string } | undefined;
    if (object.type === 'array' && items?.$ref === '#/components/schemas/Scope')
      out.push({ at, maxItems: object.maxItems as number | undefined });
    for (const [key, child] of Object.entries(object)) scopeLists(child, `${at}/${key}`, out);
  }
  return out;
}

describe('scope lists', () => {
  it('admit every scope at once', () => {
    const scopes = (bundle.components.schemas.Scope as { enum: string[] }).enum;
    const lists = scopeLists(bundle, '#', []);
    expect(lists.length).toBeGreaterThanOrEqual(4);
    for (const list of lists) expect(list.maxItems ?? Infinity, list.at).toBeGreaterThanOrEqual(scopes.length);
  });
});
