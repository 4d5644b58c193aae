/**
 * `npm run bench -- encoding`: what the analytics encoding (`analytics_encode`, run by the response trigger for
 * every stored response) costs per response, in PostgreSQL, for the five first question types and for the newer
 * ones (matrix, ranking, number, date, "Other" and N/A), against the encoding before those types existed
 * (migration 2026-11-24T0600's function, recreated under another name), all in the same run.
 *
 * Goal: a response of the five first types costs at most 1.15× what it cost before the new types; a response with
 * a 10-row grid and the other new types is reported as it is. Each figure is the median of 7 timed statements of
 * 20,000 encodings each (after a warm-up), so that planning and the client's round trip vanish in the total.
 */
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { openDatabase } from '../../server/src/db/database.js';
import { migrateToLatest } from '../../server/src/db/migrate.js';
import { down as encodingBefore } from '../../server/src/db/migrations/2026-11-28T0630_encode_matrix_ranking_dates_and_marks.js';
import { up as encodingNow } from '../../server/src/db/migrations/2026-11-28T0700_encode_by_index.js';
import { benchDatabase, median, writeBenchmarkSection } from './shared.js';

const ENCODINGS = 20_000;
const ROUNDS = 7;

const classic = {
  questions: [
    { id: 'q_1', type: 'nps' },
    { id: 'q_2', type: 'rating', min: 1, max: 5 },
    { id: 'q_3', type: 'single_choice', choices: [{ id: 'c_1' }, { id: 'c_2' }, { id: 'c_3' }] },
    { id: 'q_4', type: 'multiple_choice', choices: [{ id: 'c_1' }, { id: 'c_2' }, { id: 'c_3' }, { id: 'c_4' }] },
    { id: 'q_5', type: 'text' },
  ],
  answers: [
    { questionId: 'q_1', value: 9 },
    { questionId: 'q_2', value: 4 },
    { questionId: 'q_3', value: 'c_2' },
    { questionId: 'q_4', value: ['c_1', 'c_4'] },
    { questionId: 'q_5', value: 'More focus time, fewer meetings.' },
  ],
};

const rows = Array.from({ length: 10 }, (_, i) => ({ id: `r_${i + 1}`, text: `Statement ${i + 1}` }));
const newer = {
  questions: [
    { id: 'q_1', type: 'matrix', rows, scale: { min: 1, max: 5 }, columns: null, allowNotApplicable: true },
    { id: 'q_2', type: 'ranking', choices: [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }] },
    { id: 'q_3', type: 'number', min: 0, max: 60, integer: true },
    { id: 'q_4', type: 'date', min: null, max: null },
    { id: 'q_5', type: 'single_choice', choices: [{ id: 'c_1' }, { id: 'c_2' }], allowOther: true },
    { id: 'q_6', type: 'rating', min: 1, max: 5, allowNotApplicable: true },
  ],
  answers: [
    { questionId: 'q_1', value: Object.fromEntries(rows.map((row, i) => [row.id, i === 9 ? null : (i % 5) + 1])) },
    { questionId: 'q_2', value: ['c', 'a', 'd', 'b'] },
    { questionId: 'q_3', value: 7 },
    { questionId: 'q_4', value: '2021-07-01' },
    { questionId: 'q_5', value: 'other', other: 'On the road' },
    { questionId: 'q_6', value: null },
  ],
};

export async function run(): Promise<void> {
  const database = await benchDatabase('encoding');
  const handle = openDatabase(database.url, 2);
  try {
    await migrateToLatest(handle.db);
    // The encoding before the new types, as the 2026-11-28T0630 migration's way down writes it, under a name of its
    // own; then today's again, as the latest migration of the function (2026-11-28T0700) writes it.
    await handle.db.transaction().execute(async (tx) => {
      await encodingBefore(tx as never);
      await sql`alter function analytics_encode(jsonb, jsonb) rename to analytics_encode_before`.execute(tx);
      await encodingNow(tx as never);
    });

    const time = async (
      fn: 'analytics_encode' | 'analytics_encode_before',
      sample: { questions: unknown[]; answers: unknown[] },
    ) => {
      const statement = sql`
        select count((${sql.raw(fn)}(${JSON.stringify(sample.answers)}::jsonb, ${JSON.stringify(sample.questions)}::jsonb)).cells)
        from generate_series(1, ${ENCODINGS})`;
      await statement.execute(handle.db);
      const rounds: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const started = process.hrtime.bigint();
        await statement.execute(handle.db);
        rounds.push(Number(process.hrtime.bigint() - started) / 1e3 / ENCODINGS);
      }
      return median(rounds);
    };
    const { rows: check } = await sql<{ cells: number[] }>`
      select (analytics_encode(${JSON.stringify(newer.answers)}::jsonb, ${JSON.stringify(newer.questions)}::jsonb)).cells`.execute(
      handle.db,
    );
    const before = await time('analytics_encode_before', classic);
    const now = await time('analytics_encode', classic);
    const rich = await time('analytics_encode', newer);
    const ratio = now / before;
    const lines = [
      '## Analytics encoding of the question types (`npm run bench -- encoding`)',
      '',
      `What \`analytics_encode\` costs per response inside PostgreSQL (the response trigger runs it once per stored response): median of ${ROUNDS} statements of ${ENCODINGS.toLocaleString('en')} encodings each, in one run (${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)} at the end).`,
      '',
      '| response | µs per encoding | ratio |',
      '|---|---|---|',
      `| five first types, the encoding before the new types | ${before.toFixed(1)} | 1× |`,
      `| five first types, today's encoding | ${now.toFixed(1)} | ${ratio.toFixed(2)}× (goal ≤ 1.15×: ${ratio <= 1.15 ? 'met' : 'not met'}) |`,
      `| a 10-row grid with an N/A row, a ranking of 4, a number, a date, "Other", a rating N/A | ${rich.toFixed(1)} | ${(rich / before).toFixed(2)}× |`,
      '',
      `The newer response encodes into ${check[0]!.cells.length} cells. A grid costs a loop over its rows, and a ranking one lookup per choice: the cost grows with the parts answered, not with the survey's other questions.`,
    ];
    writeBenchmarkSection('## Analytics encoding of the question types', lines.join('\n'));
    console.log(lines.join('\n'));
  } finally {
    await handle.close();
    await database.release();
  }
}
