/**
 * express-openapi-validator (5.x) finds a request's operation by compiling every documented path with
 * path-to-regexp on every request (`openapi.metadata.js` `lookupRoute`): about 6 % of an API process's CPU in
 * the request-path benchmark. It reads `pathToRegexp` from the module object at each call, so memoising that
 * export — the same inputs always give the same, never-mutated result (no `g` flag, so `exec` keeps no state) —
 * removes the cost without forking the validator. The routes are the document's, a fixed set.
 */
import { createRequire } from 'node:module';

type PathToRegexp = (
  path: string,
  options?: { sensitive?: boolean; strict?: boolean; end?: boolean; trailing?: boolean },
) => unknown;

let installed = false;
const memoisable = new Set(['sensitive', 'strict', 'end', 'trailing']);

export function memoiseValidatorRouteRegexps(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const module = require('path-to-regexp') as { pathToRegexp: PathToRegexp };
  const original = module.pathToRegexp;
  const cache = new Map<string, unknown>();
  module.pathToRegexp = (path, options) => {
    // Only the validator's kind of call is memoised; anything else (other options, arrays) goes through as is.
    if (typeof path !== 'string' || Object.keys(options ?? {}).some((name) => !memoisable.has(name)))
      return original(path, options);
    const key = `${options?.sensitive ? 1 : 0}${options?.strict ? 1 : 0}${options?.end === false ? 0 : 1}${options?.trailing === false ? 0 : 1}${path}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = original(path, options);
      if (cache.size < 1_000) cache.set(key, compiled);
    }
    return compiled;
  };
}
