/**
 * Retention benchmark: what a retention run costs against the bare statement that removes the same rows. Four
 * organizations get the same BENCH_RESPONSES responses each (submitted through the API, so every copy a submission
 * writes exists), all made 400 days old. Two are cleared by retention runs (`delete`, then `anonymize`), in batches
 * of 500 rows through the modules' writers; their twins by one bare statement each — `DELETE FROM responses`
 * (the database's own triggers keep the analytics copy and the deletions list) and `UPDATE responses` plus
 * `UPDATE analytics_responses` — which is what a hand-written clean-up would do, holding its locks throughout.
 *
 *   npm run bench -- retention      BENCH_RESPONSES (default 5,000 per organization), BENCH_WRITE=false
 *
 * The run's job runs in a worker started in this process (startProcess, role `worker`) on the bench database; its
 * time is the run row's `completed_at - started_at`. The ratios (run ÷ bare statement) are the price of short
 * transactions, exact counts and the one-writer paths; the goal is at most 2×, with the longest transaction of the
 * run (its batches) far below the bare statement's single one.
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { loadConfig } from '../../server/src/config.js';
import type { Db } from '../../server/src/db/database.js';
import { createLogger } from '../../server/src/logger.js';
import { startRetentionRuns } from '../../server/src/modules/retention/index.js';
import { startProcess } from '../../server/src/start.js';
import { benchApi, benchTenant, startBenchService, writeBenchmarkSection, type BenchTenant } from './shared.js';

const responses = Number(process.env.BENCH_RESPONSES ?? 5_000);
const heading = '## Retention: a run against the bare statement';

async function answered(apiUrl: string, db: Db, tenant: BenchTenant): Promise<BenchTenant> {
  const call = benchApi(apiUrl, tenant.key);
  const survey = await call('POST', '/api/v1/surveys', {
    title: 'Engagement pulse',
    questions: [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'text', text: 'What should we change?', required: false },
    ],
    // Each person answers several times: 500 people give any number of responses.
    settings: { allowMultipleResponses: true },
  });
  await call('POST', `/api/v1/surveys/${survey.data.id}/launch`);
  const people = Math.min(responses, 500);
  for (let i = 0; i < people; i++)
    await call('PUT', `/api/v1/respondents/E-${i}`, { email: `person${i}@example.com`, department: `D${i % 7}` });
  // Ten at a time: the data is the point here, not the submission's speed.
  for (let i = 0; i < responses; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, responses - i) }, (_, j) =>
        call('POST', `/api/v1/surveys/${survey.data.id}/responses`, {
          respondentExternalId: `E-${(i + j) % people}`,
          answers: [
            { questionId: 'q_1', value: (i + j) % 11 },
            { questionId: 'q_2', value: `Answer number ${i + j}, about meetings.` },
          ],
        }),
      ),
    );
  }
  await sql`update responses set submitted_at = submitted_at - interval '400 days'
    where organization_id = ${tenant.organizationId}`.execute(db);
  return tenant;
}

async function runRetentionOf(
  db: Db,
  worker: Awaited<ReturnType<typeof startProcess>>,
  t: BenchTenant,
  action: string,
) {
  await db
    .insertInto('retention_settings')
    .values({
      organization_id: t.organizationId,
      environment: 'LIVE',
      responses: JSON.stringify({ afterDays: 365, basis: 'submission', action }),
      export_files_days: 7,
      events_days: 30,
      webhook_deliveries_days: 30,
      survey_exceptions: '[]',
      legal_holds: '[]',
    })
    .execute();
  // Only this organization has a policy at this moment: the daily job starts its run alone.
  await startRetentionRuns(worker.deps);
  for (;;) {
    const run = await db
      .selectFrom('retention_runs')
      .select(['status', 'removed', sql<number>`extract(epoch from completed_at - started_at) * 1000`.as('ms')])
      .where('organization_id', '=', t.organizationId)
      .executeTakeFirst();
    if (run?.status === 'completed') {
      await db.deleteFrom('retention_settings').where('organization_id', '=', t.organizationId).execute();
      return { ms: Number(run.ms), removed: run.removed };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function run(): Promise<void> {
  const service = await startBenchService('retention', { layout: 'api-process', poolSize: 4 });
  const { db } = service;
  let worker: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    // The service's tenant, then three more, each answered in turn.
    const [deleted, deletedBare, anonymized, anonymizedBare] = [
      await answered(service.url, db, service),
      await answered(service.url, db, await benchTenant(db)),
      await answered(service.url, db, await benchTenant(db)),
      await answered(service.url, db, await benchTenant(db)),
    ];
    await service.stopApi();
    await sql`vacuum analyze`.execute(db);
    worker = await startProcess(
      { ...loadConfig([]), role: 'worker', port: 0, host: '127.0.0.1', databasePoolSize: 4 },
      service.databaseUrl,
      createLogger('error'),
    );
    const loadBefore = loadavg()[0]!.toFixed(2);

    const deleteRun = await runRetentionOf(db, worker, deleted, 'delete');
    const deleteBare = await timed(() =>
      sql`delete from responses where organization_id = ${deletedBare.organizationId}
        and submitted_at < now() - interval '365 days'`.execute(db),
    );
    const anonymizeRun = await runRetentionOf(db, worker, anonymized, 'anonymize');
    const anonymizeBare = await timed(() =>
      db.transaction().execute(async (tx) => {
        await sql`update responses set respondent_external_id = null, dedupe_key = null
          where organization_id = ${anonymizedBare.organizationId} and submitted_at < now() - interval '365 days'
            and respondent_external_id is not null`.execute(tx);
        await sql`update analytics_responses set respondent_external_id = null, external_id = '', email = null,
            first_name = null, last_name = null, attributes = null
          where organization_id = ${anonymizedBare.organizationId}`.execute(tx);
      }),
    );
    const left = async (t: BenchTenant) =>
      Number(
        (
          await db
            .selectFrom('responses')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('organization_id', '=', t.organizationId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    if ((await left(deleted)) !== 0 || (await left(deletedBare)) !== 0)
      throw new Error('a deletion left responses behind');

    const perThousand = (ms: number) => ((ms / responses) * 1000).toFixed(0);
    const markdown = [
      heading,
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench -- retention\` (${responses} responses per ` +
        `organization, submitted through the API and made 400 days old; the run's job in a worker in the bench process; ` +
        `${cpus().length} CPUs shared with PostgreSQL (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}); ` +
        `1-min load average ${loadBefore} at the start; Node ${process.version}).`,
      '',
      '| action | retention run ms | bare statement ms | run ÷ bare | run ms per 1,000 | removed by the run |',
      '|---|---:|---:|---:|---:|---:|',
      `| delete | ${deleteRun.ms.toFixed(0)} | ${deleteBare.toFixed(0)} | ${(deleteRun.ms / deleteBare).toFixed(2)}× | ` +
        `${perThousand(deleteRun.ms)} | ${deleteRun.removed.deletedResponses} |`,
      `| anonymize | ${anonymizeRun.ms.toFixed(0)} | ${anonymizeBare.toFixed(0)} | ` +
        `${(anonymizeRun.ms / anonymizeBare).toFixed(2)}× | ${perThousand(anonymizeRun.ms)} | ` +
        `${anonymizeRun.removed.anonymizedResponses} |`,
      '',
      `The run works in ${Math.ceil(responses / 500)} batches of at most 500 rows, each its own transaction ` +
        '(a lock on at most 500 responses for a fraction of the run); the bare statement holds all of them to the end. ' +
        'Goal: run ÷ bare ≤ 2×.',
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    if (process.env.BENCH_WRITE !== 'false') {
      writeBenchmarkSection(heading, markdown);
      console.log('Written to BENCHMARKS.md.');
    }
  } finally {
    await worker?.close();
    await service.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
}
