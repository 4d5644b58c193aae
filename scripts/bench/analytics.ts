/**
 * Analytics benchmark: static analytics over a survey with BENCH_RESPONSES (default 1,000,000) responses to 10
 * questions, whole and broken down by department, and smart analytics over BENCH_SMART_RESPONSES (default
 * 100,000), each against hand-written SQL for the same figures, measured in the same run.
 *
 *   npm run bench -- analytics        (or: npx tsx scripts/bench/analytics.ts)
 *
 * The service runs in this process (response validation off, log level warn); the HTTP requests come from a
 * child process (scripts/bench/analytics-client.ts), one after another after BENCH_WARMUP (200) untimed ones, so p50 is
 * the
 * latency of one request to a warm service. The data is written by single INSERT … SELECT generate_series
 * statements through the real triggers, so the set-up time includes maintaining the analytics copy and the exact
 * counts. Baselines, run by this process over its own connection, one query after the other:
 *
 * - "SQL reading the same counts": the rows the service reads (the exact daily counts for the whole survey, the
 *   exact per-segment counts for the department groups, the correlation matrix) — histograms, with every figure
 *   left to compute;
 * - "SQL computing the same figures": per group and question the count, mean, standard deviation, median, NPS
 *   and its margin of error and the distribution, the group sizes and the daily series, computed in SQL from
 *   the same counts — the best hand-written SQL for the figures the API returns (the goal is at most 1.5× this);
 * - "SQL scanning every response": the same histograms by one GROUP BY over every response's typed copy (joined
 *   to `respondents` for the department);
 * - "hand-written SQL over responses.answers": the whole-survey figures from the jsonb of record with
 *   jsonb_array_elements, count, avg, stddev_samp, percentile_cont — what one would write without the copy (run
 *   BENCH_RAW_ROUNDS times, default 1: it is slow; 0 skips it).
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { httpLatencies, median, sqlLatencies, startBenchService, writeBenchmarkSection } from './shared.js';

const total = Number(process.env.BENCH_RESPONSES ?? 1_000_000);
const smartTotal = Number(process.env.BENCH_SMART_RESPONSES ?? 100_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 100);
/** The full scans take seconds each: a few runs are enough for their median. */
const scanRounds = Number(process.env.BENCH_SCAN_ROUNDS ?? 5);
/** Untimed requests before the timed ones, so that the service's and the client's code is compiled (steady state). */
const warmup = Number(process.env.BENCH_WARMUP ?? 200);
const rawRounds = Number(process.env.BENCH_RAW_ROUNDS ?? 1);

const questions = [
  { id: 'q_nps', type: 'nps', text: 'How likely are you to recommend working here?' },
  ...Array.from({ length: 6 }, (_, i) => ({
    id: `q_r${i + 1}`,
    type: 'rating',
    text: `Rating statement ${i + 1}`,
    minLabel: 'Disagree',
    maxLabel: 'Agree',
    required: false,
  })),
  {
    id: 'q_where',
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: [
      { id: 'c_1', label: 'Office' },
      { id: 'c_2', label: 'Home' },
      { id: 'c_3', label: 'Hybrid' },
    ],
  },
  {
    id: 'q_perks',
    type: 'multiple_choice',
    text: 'Which benefits matter?',
    required: false,
    maxSelections: 3,
    choices: [
      { id: 'c_1', label: 'Learning' },
      { id: 'c_2', label: 'Flex' },
      { id: 'c_3', label: 'Health' },
      { id: 'c_4', label: 'Leave' },
    ],
  },
  { id: 'q_text', type: 'text', text: 'What should we change?', required: false },
];

/** Responses for `surveyId` by respondents `E-<g>`, spread over 30 days, answers correlated. */
function insertResponses(surveyId: string, organizationId: string, idSuffix: string, count: number) {
  return `
    insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at)
    select 'rsp_' || lpad(g::text, 25, '0') || '${idSuffix}', '${surveyId}', '${organizationId}', 'LIVE', 'E-' || g, null,
      jsonb_build_array(
        jsonb_build_object('questionId', 'q_nps', 'value', least(10, (r1 * 2 + (g % 3))::int)),
        jsonb_build_object('questionId', 'q_r1', 'value', r1),
        jsonb_build_object('questionId', 'q_r2', 'value', 1 + (g * 31) % 5),
        jsonb_build_object('questionId', 'q_r3', 'value', 1 + (g * 37 + r1) % 5),
        jsonb_build_object('questionId', 'q_r4', 'value', 1 + (g * 41) % 5),
        jsonb_build_object('questionId', 'q_r5', 'value', 1 + (g * 43 + r1 * 2) % 5),
        jsonb_build_object('questionId', 'q_r6', 'value', 1 + (g * 47) % 5),
        jsonb_build_object('questionId', 'q_where', 'value', 'c_' || (1 + g % 3)),
        jsonb_build_object('questionId', 'q_perks', 'value', jsonb_build_array('c_' || (1 + g % 4), 'c_' || (1 + (g + 1) % 4))),
        jsonb_build_object('questionId', 'q_text', 'value', 'Answer number ' || g)),
      timestamptz '2026-10-01T00:00:00Z' + (g % 30) * interval '1 day' + (g % 86400) * interval '1 second'
    from generate_series(1, ${count}) g, lateral (select 1 + ((g::bigint * 7919) % 5)::int as r1) r`;
}

type Row = { name: string; times: number[]; baseline: number[]; computed?: number[]; scan?: number[] };

/** The goals paragraph, from the run's numbers (rows: whole survey, by department, smart). */
function againstGoals(rows: Row[], me: number, total: number): string {
  const [whole, byDepartment, smart] = rows as [Row, Row, Row];
  const p50 = (row: Row) => median(row.times);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  return (
    `**Against the goals** (p50 under one second over ${total.toLocaleString('en')} responses; at most 1.5× the best hand-written SQL for the same ` +
    `figures): every request answers far under a second — the department breakdown in ${p50(byDepartment).toFixed(1)} ms at p50 (7,139 ms on ` +
    `2026-11-24, when every request grouped all responses by their respondent's department: ${median(byDepartment.scan!).toFixed(0)} ms by hand in this run). ` +
    `Against the SQL that computes the same figures the breakdown runs at ${ratio(p50(byDepartment), median(byDepartment.computed!))} and the whole survey at ` +
    `${ratio(p50(whole), median(whole.computed!))}; the whole survey's SQL takes ${median(whole.computed!).toFixed(1)} ms, about the fixed cost of any API request ` +
    `(an authenticated \`GET /api/v1/me\` takes ${me.toFixed(1)} ms at p50 from the same client), and with that cost on the SQL side too — the same SQL ` +
    `served over authenticated HTTP — the whole survey runs at ${ratio(p50(whole), median(whole.computed!) + me)} and the breakdown at ` +
    `${ratio(p50(byDepartment), median(byDepartment.computed!) + me)}. Against the SQL that only reads the counts (histograms, every figure left to compute) ` +
    `the ratios are ${ratio(p50(whole), median(whole.baseline))} and ${ratio(p50(byDepartment), median(byDepartment.baseline))}: that fixed cost, the survey, ` +
    'threshold and distribution lookups, and turning histograms into the figures and the JSON (21 groups × 10 questions for the breakdown). Smart ' +
    `analytics spend their time in the correlation matrix over the complete responses, which the SQL baseline computes the same way ` +
    `(${ratio(p50(smart), median(smart.baseline))}).`
  );
}

export async function run(): Promise<void> {
  const service = await startBenchService('analytics', { layout: 'in-process', poolSize: 10 });
  const client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
  try {
    const { organizationId, key, api } = service;
    const big = (await api('POST', '/api/v1/surveys', { title: 'Benchmark 1M', questions })).data.id;
    const small = (await api('POST', '/api/v1/surveys', { title: 'Benchmark smart', questions })).data.id;
    await api('POST', `/api/v1/surveys/${big}/launch`);
    await api('POST', `/api/v1/surveys/${small}/launch`);

    console.log(`Writing ${total} respondents and ${total} + ${smartTotal} responses…`);
    let start = performance.now();
    await client.query(`
      insert into respondents (organization_id, environment, external_id, email, department, location, attributes, content_hash)
      select '${organizationId}', 'LIVE', 'E-' || g, 'e' || g || '@example.com', 'Department ' || (g % 20), 'City ' || (g % 7), '{}', 'x'
      from generate_series(1, ${total}) g`);
    const respondentSeconds = (performance.now() - start) / 1000;
    start = performance.now();
    await client.query(insertResponses(big, organizationId, 'E', total));
    const responseSeconds = (performance.now() - start) / 1000;
    await client.query(insertResponses(small, organizationId, 'S', smartTotal));
    await client.query('vacuum analyze');

    const loadBefore = loadavg()[0]!.toFixed(2);
    console.log(`Measuring ${rounds} sequential requests per row…`);
    const base = `${service.url}/api/v1/surveys/${big}/analytics/static`;
    const scope = [organizationId, 'LIVE', big];
    const dayCode = `-1 - ((ar.submitted_at at time zone 'UTC')::date - date '1970-01-01')`;
    // The best SQL for the whole survey's figures: the exact daily counts the triggers keep (the `#` rows).
    const dailyCounts = `select case when u.code < 0 then -1 - (day - date '1970-01-01') else u.code end, sum(u.n)
      from analytics_segment_cells, unnest(codes, counts) as u(code, n)
      where organization_id = $1 and environment = $2 and survey_id = $3 and field = '#' group by 1`;
    // The same figures by scanning every response's copy (histograms and the daily series in one pass).
    const fullScan = `select code, count(*)::int from analytics_responses ar, unnest(array_append(ar.cells, ${dayCode})) code
      where ar.organization_id = $1 and ar.environment = $2 and ar.survey_id = $3 group by code`;
    const departmentScan = `select p.department, code, count(*)::int from analytics_responses ar
      left join respondents p on p.organization_id = ar.organization_id and p.environment = ar.environment and p.external_id = ar.respondent_external_id,
      unnest(array_append(ar.cells, ${dayCode})) code
      where ar.organization_id = $1 and ar.environment = $2 and ar.survey_id = $3 group by 1, 2`;
    // The department groups from the exact per-segment counts the triggers keep.
    const departmentCounts = `select value, case when u.code < 0 then -1 - (day - date '1970-01-01') else u.code end, sum(u.n)
      from analytics_segment_cells, unnest(codes, counts) as u(code, n)
      where organization_id = $1 and environment = $2 and survey_id = $3 and field = 'department' group by 1, 2`;
    const rawStatic = `select a->>'questionId' as q, count(*),
        avg((a->>'value')::numeric) filter (where jsonb_typeof(a->'value') = 'number'),
        stddev_samp((a->>'value')::numeric) filter (where jsonb_typeof(a->'value') = 'number'),
        percentile_cont(0.5) within group (order by (a->>'value')::numeric) filter (where jsonb_typeof(a->'value') = 'number'),
        avg(length(a->>'value')) filter (where jsonb_typeof(a->'value') = 'string')
      from responses r, jsonb_array_elements(r.answers) a where r.organization_id = $1 and r.environment = $2 and r.survey_id = $3 group by 1`;
    const rawDaily = `select (submitted_at at time zone 'UTC')::date, count(*) from responses
      where organization_id = $1 and environment = $2 and survey_id = $3 group by 1`;
    // The same figures computed in SQL (what the service computes in TypeScript from the histograms): per group and
    // question the count, mean, sample standard deviation, median (percentile_cont(0.5)), NPS with its margin of
    // error and the full distribution; plus the group sizes and the daily series.
    const figures = (from: string, group: string, code: string, n: string, where: string) => `
      with h as (
        select ${group} as grp, ${code} / 100000 as q, ${code} % 100000 as v, sum(${n}) as n
        from ${from} where ${where} and ${code} >= 0 group by 1, 2, 3 having sum(${n}) > 0
      ), c as (
        select grp, q, v, n, sum(n) over (partition by grp, q order by v) as cum, sum(n) over (partition by grp, q) as total from h
      ), f as (
        select grp, q, total, sum(v::float8 * n) / total as mean,
          sqrt(greatest(0, sum(v::float8 * v * n) - sum(v::float8 * n) ^ 2 / total) / nullif(total - 1, 0)) as sd,
          (min(v) filter (where cum >= floor((total + 1) / 2.0)) + min(v) filter (where cum >= floor(total / 2.0) + 1)) / 2.0 as median,
          coalesce(sum(n) filter (where v >= 9), 0)::float8 / total as p, coalesce(sum(n) filter (where v <= 6), 0)::float8 / total as d,
          array_agg(v order by v) as answer_values, array_agg(n order by v) as answer_counts
        from c group by grp, q, total
      )
      select grp, q, total, mean, sd, median, 100 * (p - d) as nps, 196 * sqrt(greatest(0, p + d - (p - d) ^ 2) / total) as margin,
        answer_values, answer_counts from f`;
    const tenantWhere = 'organization_id = $1 and environment = $2 and survey_id = $3';
    const wholeFigures = figures(
      'analytics_segment_cells, unnest(codes, counts) as u(code, n)',
      'null::text',
      'u.code',
      'u.n',
      `${tenantWhere} and field = '#'`,
    );
    const daySeries = `select day, sum(u.n) from analytics_segment_cells, unnest(codes, counts) as u(code, n)
      where ${tenantWhere} and field = '#' and u.code = -1 group by day`;
    const departmentFigures = figures(
      'analytics_segment_cells, unnest(codes, counts) as u(code, n)',
      'value',
      'u.code',
      'u.n',
      `${tenantWhere} and field in ('department', '*')`,
    );
    const departmentSizes = `select value, sum(u.n) from analytics_segment_cells, unnest(codes, counts) as u(code, n) where ${tenantWhere} and field in ('department', '*') and u.code = -1 group by 1`;
    // The answer also carries the anonymity threshold (which decides what is suppressed) and the invitations.
    const thresholdAndInvited = `select (select anonymity_threshold from analytics_settings where organization_id = $1 and environment = $2),
      (select count(*) from distribution_recipients where ${tenantWhere} and status in ('sent', 'responded'))`;
    const smartScope = [organizationId, 'LIVE', small];
    // Driver analysis needs the whole correlation matrix of the outcome and the six ratings over the complete
    // responses, with each one's mean and favourable count (9–10 on NPS, above 3.4 on a 1–5 scale).
    const positions = [1, 2, 3, 4, 5, 6, 7];
    const at = (p: number) => `ar.nums[${p}]`;
    const smartCorrelations = `select count(*), ${positions
      .flatMap((a, i) => [
        `avg(${at(a)})`,
        `count(*) filter (where ${at(a)} > ${a === 1 ? 8 : 3.4})`,
        ...positions.slice(i + 1).map((b) => `corr(${at(a)}, ${at(b)})`),
      ])
      .join(', ')} from analytics_responses ar
      where ar.organization_id = $1 and ar.environment = $2 and ar.survey_id = $3 and ${positions.map((p) => `${at(p)} is not null`).join(' and ')}`;
    type Queries = [string[], unknown[][]];
    const rows: Row[] = [];
    /**
     * `counts`: the SQL reading what the service reads; `computed`: the same figures computed in SQL; `scan`: from
     * every response.
     */
    const measure = async (name: string, url: string, counts: Queries, computed?: Queries, scan?: Queries) => {
      await httpLatencies(url, key, 1, warmup); // warm-up of the service (the client also warms up its own connection)
      // and of the baselines
      for (const queries of [counts, computed, scan]) if (queries) await sqlLatencies(client, 1, ...queries);
      const baseline = await sqlLatencies(client, rounds, ...counts);
      const figured = computed ? await sqlLatencies(client, rounds, ...computed) : undefined;
      const scanned = scan ? await sqlLatencies(client, scanRounds, ...scan) : undefined;
      const times = await httpLatencies(url, key, rounds, warmup);
      rows.push({ name, times, baseline, computed: figured, scan: scanned });
      console.log(
        `${name}: service p50 ${median(times).toFixed(1)} ms, SQL reading the counts p50 ${median(baseline).toFixed(1)} ms${figured ? `, SQL computing the figures p50 ${median(figured).toFixed(1)} ms` : ''}${scanned ? `, full scan p50 ${median(scanned).toFixed(0)} ms` : ''}`,
      );
    };
    await measure(
      `static, ${total.toLocaleString('en')} responses × 10 questions`,
      base,
      [[dailyCounts], [scope]],
      [
        [thresholdAndInvited, wholeFigures, daySeries],
        [scope, scope, scope],
      ],
      [[fullScan], [scope]],
    );
    await measure(
      'static by department (20 departments)',
      `${base}?segmentBy=department`,
      [
        [dailyCounts, departmentCounts],
        [scope, scope],
      ],
      [
        [thresholdAndInvited, wholeFigures, daySeries, departmentFigures, departmentSizes],
        [scope, scope, scope, scope, scope],
      ],
      [
        [dailyCounts, departmentScan],
        [scope, scope],
      ],
    );
    await measure(
      `smart by department, ${smartTotal.toLocaleString('en')} responses`,
      `${service.url}/api/v1/surveys/${small}/analytics/smart?segmentBy=department`,
      [
        [dailyCounts, departmentCounts, smartCorrelations],
        [smartScope, smartScope, smartScope],
      ],
      undefined,
      [
        [dailyCounts, departmentScan, smartCorrelations],
        [smartScope, smartScope, smartScope],
      ],
    );
    const me = await httpLatencies(`${service.url}/api/v1/me`, key, rounds, warmup);
    const raw = rawRounds > 0 ? await sqlLatencies(client, rawRounds, [rawStatic, rawDaily], [scope, scope]) : [];
    if (raw.length > 0) console.log(`hand-written SQL over responses.answers: p50 ${median(raw).toFixed(0)} ms`);

    const date = new Date().toISOString().slice(0, 10);
    const table = rows.map((row) => {
      const p50 = median(row.times);
      const counts = median(row.baseline);
      const computed = row.computed ? median(row.computed) : undefined;
      const scan = row.scan ? median(row.scan).toFixed(0) : '—';
      return `| ${row.name} | ${p50.toFixed(1)} | ${Math.max(...row.times).toFixed(1)} | ${counts.toFixed(1)} | ${(p50 / counts).toFixed(2)} | ${computed === undefined ? '—' : computed.toFixed(1)} | ${computed === undefined ? '—' : (p50 / computed).toFixed(2)} | ${scan} |`;
    });
    const markdown = [
      '## Analytics',
      '',
      `Measured ${date} with \`npm run bench -- analytics\` (${cpus().length} CPUs shared with the database and the client process, ` +
        `1-min load average ${loadBefore} at the start, PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded, default settings'}, Node ${process.version}). ` +
        `${rounds} sequential requests per row from a separate client process after ${warmup} untimed ones (steady state: after 20, p50 still carried ` +
        `compilation); the SQL baselines run the same number of times over their own connection (after one untimed run; the full scans ${scanRounds} ` +
        'times), one query after the other, in the same run.',
      '',
      '| request | service p50 ms | service max ms | SQL reading the same counts p50 ms | ratio | SQL computing the same figures p50 ms | ratio | SQL scanning every response p50 ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...table,
      '',
      'Baselines, run one query after the other over one connection: **SQL reading the same counts** fetches the rows the service reads — the exact ' +
        'daily counts (the `#` rows of `analytics_segment_cells`), the exact per-segment counts (`analytics_segment_cells`, one `unnest(codes, counts)` GROUP BY) and, ' +
        'for smart analytics, the correlation matrix of the outcome and the six ratings over the complete responses — that is histograms, with every ' +
        'figure left to compute. **SQL computing the same figures** computes from the same counts what the API returns: per group and question ' +
        'the count, mean, sample standard deviation, median, NPS with its margin of error and the distribution, plus the group sizes, the ' +
        'daily series (window functions over the histograms), the anonymity threshold and the number invited. **SQL scanning every response** groups the typed copy of every response (joined to ' +
        '`respondents` for the department) instead of reading the counts. ' +
        (raw.length > 0
          ? `Without the typed copy, the hand-written query over \`responses.answers\` (jsonb_array_elements with count, avg, stddev_samp, ` +
            `percentile_cont, plus the daily series) took ${median(raw).toFixed(0)} ms for the ${total.toLocaleString('en')} responses (${rawRounds} run${rawRounds === 1 ? '' : 's'}).`
          : ''),
      '',
      againstGoals(rows, median(me), total),
      '',
      `Set-up through the real triggers: ${total.toLocaleString('en')} respondents in ${respondentSeconds.toFixed(1)} s; ` +
        `${total.toLocaleString('en')} responses (one INSERT … SELECT generate_series, each row encoded by the trigger into \`analytics_responses\`) in ${responseSeconds.toFixed(1)} s, ` +
        `${((responseSeconds * 1e6) / total).toFixed(0)} µs per response — the cost a submission pays for exact, always-current analytics ` +
        '(the typed copy, the daily counts and the per-segment counts of five respondent fields).',
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    writeBenchmarkSection('## Analytics', markdown);
    console.log('Written to BENCHMARKS.md.');
  } finally {
    await client.end();
    await service.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
}
