/**
 * Analytics as asked: an integrator renders the survey in its own portal and submits BENCH_RESPONSES (default
 * 50,000) answers through the API for people a distribution reached; then a third of them move department. The
 * department report segments every answer by the distribution's snapshot (the subject frozen with each response),
 * against hand-written SQL that joins the responses to the snapshot — what one writes without the frozen subject —
 * measured in the same run.
 *
 *   npm run bench -- analytics-as-asked
 *
 * The service (API and worker) runs in this process; the HTTP requests come from a child process
 * (scripts/bench/analytics-client.ts), one after another after BENCH_WARMUP (100) untimed ones. The responses are
 * written by one INSERT … SELECT with the distribution the response writer attributes them to, through the real
 * triggers. Rows:
 * - by department, no filter (the exact per-segment counts);
 * - by department with a filter on location (a scan of the typed copy and its subject, no join);
 * - narrowed to the distribution (its id on every response).
 */
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { httpLatencies, median, sqlLatencies, startBenchService, writeBenchmarkSection } from './shared.js';

const total = Number(process.env.BENCH_RESPONSES ?? 50_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 50);
const warmup = Number(process.env.BENCH_WARMUP ?? 100);

const questions = [
  { id: 'q_nps', type: 'nps', text: 'How likely are you to recommend working here?' },
  ...Array.from({ length: 4 }, (_, i) => ({
    id: `q_r${i + 1}`,
    type: 'rating',
    text: `Rating statement ${i + 1}`,
    minLabel: 'Disagree',
    maxLabel: 'Agree',
  })),
];

export async function run(): Promise<void> {
  const service = await startBenchService('as_asked', { layout: 'in-process', role: 'all', poolSize: 10 });
  const client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
  try {
    const { organizationId, key, api } = service;
    const surveyId = (await api('POST', '/api/v1/surveys', { title: 'As asked', questions })).data.id;
    await api('POST', `/api/v1/surveys/${surveyId}/launch`);

    console.log(`Writing ${total} respondents, a distribution to all of them and ${total} answers…`);
    await client.query(
      `
      insert into respondents (organization_id, environment, external_id, email, department, location, attributes, content_hash)
      select $1, 'LIVE', 'E-' || g, 'e' || g || '@example.com', 'Department ' || (g % 20), 'City ' || (g % 7), '{}', 'x'
      from generate_series(1, ${total}) g`,
      [organizationId],
    );
    const distributionId = (
      await api('POST', `/api/v1/surveys/${surveyId}/distribute`, {
        targeting: { filters: [] },
        distribution: { method: 'link' },
      })
    ).data.id;
    for (let status = ''; status !== 'sent';) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = (await api('GET', `/api/v1/surveys/${surveyId}/distributions/${distributionId}`)).data.status ?? '';
    }
    // As autovacuum would soon after such loads: without statistics the triggers' joins are planned for empty tables.
    await client.query('analyze respondents, distribution_recipients');
    let start = performance.now();
    await client.query(
      `
      insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at, distribution_id)
      select 'rsp_' || lpad(g::text, 26, '0'), $1, $2, 'LIVE', 'E-' || g, 'E-' || g,
        jsonb_build_array(jsonb_build_object('questionId', 'q_nps', 'value', (g * 7) % 11),
          jsonb_build_object('questionId', 'q_r1', 'value', 1 + g % 5), jsonb_build_object('questionId', 'q_r2', 'value', 1 + (g * 3) % 5),
          jsonb_build_object('questionId', 'q_r3', 'value', 1 + (g * 7) % 5), jsonb_build_object('questionId', 'q_r4', 'value', 1 + (g * 11) % 5)),
        timestamptz '2026-10-01T00:00:00Z' + (g % 20) * interval '1 day' + (g % 86400) * interval '1 second', $3
      from generate_series(1, ${total}) g`,
      [surveyId, organizationId, distributionId],
    );
    const writeSeconds = (performance.now() - start) / 1000;
    // A third of the people move after answering: no report may change, and moving them touches no analytics row.
    start = performance.now();
    await client.query(
      `update respondents set department = 'Moved ' || (substr(external_id, 3)::int % 5) where organization_id = $1 and substr(external_id, 3)::int % 3 = 0`,
      [organizationId],
    );
    const moveSeconds = (performance.now() - start) / 1000;
    await client.query('vacuum analyze');

    const scope = [organizationId, 'LIVE', surveyId];
    const dayCode = `-1 - ((ar.submitted_at at time zone 'UTC')::date - date '1970-01-01')`;
    // The histograms every figure is computed from, by department of the snapshot, joined as one would by hand.
    const withJoin = (where = '') => `select dr.department, code, count(*)::int from analytics_responses ar
      join distribution_recipients dr on dr.organization_id = ar.organization_id and dr.environment = ar.environment
        and dr.distribution_id = ar.distribution_id and dr.external_id = ar.respondent_external_id,
      unnest(array_append(ar.cells, ${dayCode})) code
      where ar.organization_id = $1 and ar.environment = $2 and ar.survey_id = $3 ${where} group by 1, 2`;
    const byDistribution = `select code, count(*)::int from analytics_responses ar, unnest(array_append(ar.cells, ${dayCode})) code
      where ar.organization_id = $1 and ar.environment = $2 and ar.survey_id = $3 and ar.distribution_id = $4 group by 1`;
    const base = `${service.url}/api/v1/surveys/${surveyId}/analytics/static`;
    const filter = encodeURIComponent(
      JSON.stringify({ filters: [{ field: 'location', operator: 'in', value: ['City 1', 'City 2', 'City 3'] }] }),
    );
    const rows: Array<{ name: string; service: number[]; sql: number[] }> = [];
    const measure = async (name: string, url: string, queries: string[], params: unknown[][]) => {
      await httpLatencies(url, key, 1, warmup);
      await sqlLatencies(client, 3, queries, params);
      const sql = await sqlLatencies(client, rounds, queries, params);
      const times = await httpLatencies(url, key, rounds, 0);
      rows.push({ name, service: times, sql });
      console.log(
        `${name}: service p50 ${median(times).toFixed(1)} ms, hand-written SQL with the join p50 ${median(sql).toFixed(1)} ms`,
      );
    };
    const loadBefore = loadavg()[0]!.toFixed(2);
    await measure('by department', `${base}?segmentBy=department`, [withJoin()], [scope]);
    await measure(
      'by department, filtered on location',
      `${base}?segmentBy=department&filters=${filter}`,
      [withJoin(`and dr.location in ('City 1', 'City 2', 'City 3')`)],
      [scope],
    );
    await measure(
      'narrowed to the distribution',
      `${base}?distributionId=${distributionId}`,
      [byDistribution],
      [[...scope, distributionId]],
    );

    const table = rows.map(
      (row) =>
        `| ${row.name} | ${median(row.service).toFixed(1)} | ${median(row.sql).toFixed(1)} | ${(median(row.service) / median(row.sql)).toFixed(2)} |`,
    );
    writeBenchmarkSection(
      '## Analytics as asked',
      [
        '## Analytics as asked',
        '',
        `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench -- analytics-as-asked\` (${cpus().length} CPUs shared with the database and the ` +
          `client process, 1-min load average ${loadBefore} at the start). ${total.toLocaleString('en')} answers submitted for people a distribution reached ` +
          `(written in ${writeSeconds.toFixed(1)} s through the triggers that freeze each answer's subject), then a third of them moved department ` +
          `(${moveSeconds.toFixed(2)} s: no analytics row moves). p50 of ${rounds} sequential requests from a separate process, after ${warmup} untimed; ` +
          "the baseline is hand-written SQL that joins the typed copy to the distribution's snapshot and returns only the histograms (every figure left " +
          'to compute), run over its own connection in the same run. Goal: at most 1.5× (was 20× on 2026-11-25, 5.2 s against 0.26 s, when such answers ' +
          'were segmented through a per-row lookup of the current record).',
        '',
        '| report | service p50 (ms) | SQL with the join p50 (ms) | ratio |',
        '|---|---|---|---|',
        ...table,
      ].join('\n'),
    );
  } finally {
    await client.end();
    await service.close();
  }
}
