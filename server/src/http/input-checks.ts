/**
 * What JSON and URLs can carry but PostgreSQL `text`/`jsonb` cannot store, found before anything else runs:
 * NUL characters and lone UTF-16 surrogates (in values and in member names), and values nested deeper than any
 * schema of the contract goes (a very deep value would otherwise exhaust the stack where it is serialized).
 * Each problem is an ErrorDetail naming where it was found.
 */
import type { ErrorDetail } from './errors.js';

/** Deeper than any body of the contract needs (survey questions with choices are 5 levels deep). */
export const maxDepth = 32;

// A NUL, or a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function hasUnstorableCharacter(text: string): boolean {
  return unstorable.test(text);
}

function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Pointers echo member names: a hostile name is shortened and cleaned so that the reply stays valid. */
function safeToken(token: string): string {
  const cleaned = token.replace(/[\0\uD800-\uDFFF]/g, '\uFFFD');
  return escapeToken(cleaned.length > 64 ? `${cleaned.slice(0, 64)}…` : cleaned);
}

/**
 * Walks a parsed value; stops early once `limit` problems are found. The pointer of a value is written only when it
 * has a problem: the walk keeps the way down as a stack of member names and indexes, so that a large body (a sync
 * of 100,000 records) costs no string per value.
 */
export function checkValue(
  value: unknown,
  path: string,
  problems: ErrorDetail[],
  limit = 20,
  depth = 0,
  characters = true,
): void {
  walk(value, { base: path, steps: [], problems, limit, characters }, depth);
}

interface Walk {
  base: string;
  steps: Array<string | number>;
  problems: ErrorDetail[];
  limit: number;
  characters: boolean;
}

function pointer(walk: Walk): string {
  let path = walk.base;
  for (const step of walk.steps) path += `/${typeof step === 'number' ? step : escapeToken(step)}`;
  return path;
}

function walk(value: unknown, at: Walk, depth: number): void {
  const { problems } = at;
  if (problems.length >= at.limit) return;
  if (typeof value === 'string') {
    if (at.characters && hasUnstorableCharacter(value))
      problems.push({
        path: pointer(at),
        code: 'invalid_character',
        message: 'must not contain NUL characters or unpaired UTF-16 surrogates',
      });
    return;
  }
  if (typeof value === 'number') {
    // 1e400 parses as Infinity, which JSON cannot carry back: refused rather than stored as something else.
    if (!Number.isFinite(value))
      problems.push({
        path: pointer(at),
        code: 'out_of_range',
        message: 'must be a finite number (at most about 1.8e308)',
      });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth >= maxDepth) {
    problems.push({ path: pointer(at), code: 'too_deep', message: `nests deeper than ${maxDepth} levels` });
    return;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && problems.length < at.limit; index++) {
      at.steps.push(index);
      walk(value[index], at, depth + 1);
      at.steps.pop();
    }
    return;
  }
  const members = value as Record<string, unknown>;
  for (const key in members) {
    if (problems.length >= at.limit) return;
    if (!Object.hasOwn(members, key)) continue;
    if (at.characters && hasUnstorableCharacter(key)) {
      problems.push({
        path: `${pointer(at)}/${safeToken(key)}`,
        code: 'invalid_character',
        message: 'member names must not contain NUL characters or unpaired UTF-16 surrogates',
      });
      continue;
    }
    at.steps.push(key);
    walk(members[key], at, depth + 1);
    at.steps.pop();
  }
}

/** Whether any problem is a too-deep value (the request is then replied without further validation). */
export function tooDeep(problems: readonly ErrorDetail[]): boolean {
  return problems.some((problem) => problem.code === 'too_deep');
}

/**
 * Query parameters are held to the same text rules as bodies, starting with their spelling on the wire. The
 * query parser keeps a parameter it cannot decode exactly as it was sent — `%ED%A0%80` (a lone surrogate in
 * UTF-8 form, which is not UTF-8), `%uD800`, a stray `%` — so the value would otherwise reach a query as literal
 * text instead of being refused like the same text in a body. Each parameter whose name or value is not valid
 * percent-encoded UTF-8 is a problem at `/query/<name>`.
 */
export function checkQueryEncoding(rawQuery: string, problems: ErrorDetail[], limit = 20): void {
  for (const pair of rawQuery.split('&')) {
    if (problems.length >= limit) return;
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const name = percentDecoded(rawName);
    if (name !== undefined && (equals === -1 || percentDecoded(pair.slice(equals + 1)) !== undefined)) continue;
    // Named as the parser names it: the part before any `[`, decoded when it can be.
    const shown = (name ?? rawName).replace(/(.)\[.*$/s, '$1');
    problems.push({
      path: `/query/${safeToken(shown)}`,
      code: 'invalid_character',
      message: `${name === undefined ? 'the parameter name' : 'the value'} is not valid percent-encoded UTF-8 (a lone surrogate such as %ED%A0%80 or %uD800, or a malformed escape)`,
    });
  }
}

/** A query component decoded as the query parser does (`+` is a space), or undefined when it cannot be. */
function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
