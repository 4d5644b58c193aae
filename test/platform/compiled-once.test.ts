/**
 * compiledOnce: a query built and compiled once per shape, then run with each call's values. Every call must get
 * the rows its own values select (no value of an earlier call left in place), each shape its own SQL, and a builder
 * that transforms a value instead of passing it through must be refused rather than run with a stale constant.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledOnce } from '../../server/src/db/compiled-once.js';
import { openDatabase, type DatabaseHandle } from '../../server/src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let handle: DatabaseHandle;
beforeAll(async () => {
  database = await createTestDatabase();
  handle = openDatabase(database.url, 2);
});
afterAll(async () => {
  await handle?.close();
  await database?.release();
});

describe('compiledOnce', () => {
  it('builds once per shape and runs each call with its own values', async () => {
    let builds = 0;
    const numbers = compiledOnce((db, values: { from: number; to: number; even?: boolean }) => {
      builds++;
      const even = values.even === undefined ? sql`true` : sql`(n % 2 = 0) = ${values.even}`;
      return sql<{
        n: number;
      }>`select n from generate_series(${values.from}::int, ${values.to}::int) n where ${even} order by n`.compile(db);
    });
    const run = async (values: { from: number; to: number; even?: boolean }) =>
      (await numbers(handle.db, values)).map((row) => row.n);
    expect(await run({ from: 1, to: 3 })).toEqual([1, 2, 3]);
    expect(await run({ from: 5, to: 7 })).toEqual([5, 6, 7]);
    expect(builds).toBe(1);
    expect(await run({ from: 1, to: 6, even: true })).toEqual([2, 4, 6]);
    expect(await run({ from: 1, to: 6, even: false })).toEqual([1, 3, 5]);
    expect(await run({ from: 10, to: 11 })).toEqual([10, 11]);
    expect(builds).toBe(2);
  });

  it('refuses a builder that turns a value into another parameter', async () => {
    const shifted = compiledOnce((db, values: { from: number }) =>
      sql<{ n: number }>`select ${`${String(values.from)}!`} as n`.compile(db),
    );
    await expect(shifted(handle.db, { from: 1 })).rejects.toThrow(/no placeholder/);
  });
});
