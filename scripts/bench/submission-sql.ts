/**
 * PostgreSQL's own work per stored response, apart from any client: a procedure in the bench database inserts
 * responses of the request-path bench's survey (4 questions, anonymous) one by one, with the analytics copy trigger
 * (`analytics_responses_insert`) enabled and then disabled, each way either committing after every insert (as a
 * submission does) or all in one transaction. Asynchronous commit, so the time is CPU, not the WAL flush.
 *
 *   npm run bench -- submission-sql      BENCH_WRITES (default 2000), BENCH_ROUNDS (default 5)
 *
 * The gap between "commit each" and "one transaction" is work PostgreSQL redoes in every transaction (PL/pgSQL, for
 * one, initialises each expression it evaluates again in each transaction). Writes its section of BENCHMARKS.md.
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { median, startBenchService, writeBenchmarkSection } from './shared.js';

const writes = Number(process.env.BENCH_WRITES ?? 2000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

/** Inserts `n` responses; `commitEach` commits after each one. Returns µs per insert (wall time of the backend). */
const insertLoop = `
  create procedure bench_insert_responses(survey text, n integer, commit_each boolean, inout micros numeric)
  language plpgsql as $$
  declare
    started timestamptz;
    org text;
    env text;
  begin
    select organization_id, environment into org, env from surveys where id = survey;
    started := clock_timestamp();
    for i in 1 .. n loop
      insert into responses (id, survey_id, organization_id, environment, answers, submitted_at, survey_version)
      values ('rsp_bench_' || nextval('bench_response_ids'), survey, org, env,
              '[{"questionId":"q_1","value":9},{"questionId":"q_2","value":4},{"questionId":"q_3","value":"c_2"},'
              '{"questionId":"q_4","value":"Fewer meetings."}]', now(), 1);
      if commit_each then
        commit;
      end if;
    end loop;
    micros := extract(epoch from clock_timestamp() - started) * 1e6 / n;
  end $$`;

export async function run(): Promise<void> {
  const service = await startBenchService('submission_sql', { layout: 'in-process' });
  const client = new pg.Client({ connectionString: service.databaseUrl, options: '-c synchronous_commit=off' });
  await client.connect();
  try {
    const { api } = service;
    const questions = [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'rating', text: 'I have the tools I need.' },
      { type: 'single_choice', text: 'Where do you work?', choices: [{ label: 'Office' }, { label: 'Home' }] },
      { type: 'text', text: 'What should we change?', required: false },
    ];
    const surveyId = (
      await api('POST', '/api/v1/surveys', {
        title: 'Submission cost',
        questions,
        settings: { anonymous: true, allowMultipleResponses: true },
      })
    ).data.id;
    await api('POST', `/api/v1/surveys/${surveyId}/launch`);
    await service.stopApi();
    await client.query('create sequence bench_response_ids');
    await client.query(insertLoop);
    const measure = async (commitEach: boolean) => {
      // CALL runs the procedure outside a transaction block, so COMMIT inside it is allowed.
      const { rows } = await client.query<{ micros: string }>('call bench_insert_responses($1, $2, $3, null)', [
        surveyId,
        writes,
        commitEach,
      ]);
      return Number(rows[0]!.micros);
    };
    const copyTrigger = async (on: boolean) =>
      client.query(`alter table responses ${on ? 'enable' : 'disable'} trigger analytics_responses_insert`);
    const loadBefore = loadavg()[0]!.toFixed(2);
    await measure(true); // warm-up: caches, the plans of the triggers
    const samples = {
      copyEach: [] as number[],
      copyOne: [] as number[],
      bareEach: [] as number[],
      bareOne: [] as number[],
    };
    for (let r = 0; r < rounds; r++) {
      await copyTrigger(true);
      samples.copyEach.push(await measure(true));
      samples.copyOne.push(await measure(false));
      await copyTrigger(false);
      samples.bareEach.push(await measure(true));
      samples.bareOne.push(await measure(false));
      console.log(
        `round ${r}: with copy ${samples.copyEach[r]!.toFixed(0)} / ${samples.copyOne[r]!.toFixed(0)} µs, without ${samples.bareEach[r]!.toFixed(0)} / ${samples.bareOne[r]!.toFixed(0)} µs (commit each / one transaction)`,
      );
    }
    await copyTrigger(true);
    const m = {
      copyEach: median(samples.copyEach),
      copyOne: median(samples.copyOne),
      bareEach: median(samples.bareEach),
      bareOne: median(samples.bareOne),
    };
    const markdown = [
      '## Submission in PostgreSQL',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench -- submission-sql\` (${cpus().length} CPUs, 1-min load average ${loadBefore} at the start, ` +
        `PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded, default settings'}): a procedure inserts ${writes.toLocaleString('en')} responses of the ` +
        "request-path bench's anonymous 4-question survey one by one, inside PostgreSQL (no client, asynchronous commit: CPU, not the WAL flush), " +
        `with the analytics copy trigger and without it; median µs per insert of ${rounds} interleaved rounds. The response's ` +
        "other trigger (its transaction stamp), foreign key and indexes stay; the submission statement's other writes (count delta, event) are " +
        'not in this measurement.',
      '',
      '| | commit after each insert µs | one transaction µs | per-transaction part µs |',
      '|---|---:|---:|---:|',
      `| with the analytics copy | ${m.copyEach.toFixed(0)} | ${m.copyOne.toFixed(0)} | ${(m.copyEach - m.copyOne).toFixed(0)} |`,
      `| without it | ${m.bareEach.toFixed(0)} | ${m.bareOne.toFixed(0)} | ${(m.bareEach - m.bareOne).toFixed(0)} |`,
      `| the copy's share | ${(m.copyEach - m.bareEach).toFixed(0)} | ${(m.copyOne - m.bareOne).toFixed(0)} | ${(m.copyEach - m.copyOne - (m.bareEach - m.bareOne)).toFixed(0)} |`,
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    writeBenchmarkSection('## Submission in PostgreSQL', markdown);
  } finally {
    await client.end();
    await service.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
}
