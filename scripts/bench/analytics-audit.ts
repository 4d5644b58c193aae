/**
 * The audit of released results, what it costs: static analytics by department over BENCH_AUDIT_RESPONSES (default
 * 50,000) responses after BENCH_AUDIT_GROUPS (default about 500) groups were released for the survey (windows,
 * segments, filters and their combinations, each through HTTP), against the same request's work without the audit.
 *
 *   npm run bench -- analytics-audit
 *
 * The service runs in this process (response validation off), the timed requests come from a child process
 * (analytics-client.ts), one after another after BENCH_WARMUP (50) untimed ones. A request whose groups were all
 * released before passes the audit on its groups' fingerprints (one statement over the scope, one indexed lookup):
 * "without the audit" is the request's p50 less the p50 of those two statements, timed over this process's own
 * connection in the same run (the service cannot run without its audit). Also timed: releasing a group not seen
 * before (the survey's state read, decided and written).
 */
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { groupSets, releasedFingerprints } from '../../server/src/modules/analytics/repository.js';
import { httpLatencies, median, startBenchService, writeBenchmarkSection } from './shared.js';

const total = Number(process.env.BENCH_AUDIT_RESPONSES ?? 50_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 100);
const warmup = Number(process.env.BENCH_WARMUP ?? 50);
const departments = 20;
const cities = 7;

const questions = [
  { id: 'q_nps', type: 'nps', text: 'How likely are you to recommend working here?' },
  { id: 'q_r1', type: 'rating', text: 'I have the tools I need.' },
  { id: 'q_r2', type: 'rating', text: 'My manager supports me.' },
];

/** The queries of ~500 releases: windows, segments, filters, and filters with windows. */
function releases(): Record<string, string>[] {
  const day = (d: number) => new Date(Date.UTC(2026, 9, 1 + d)).toISOString();
  const equals = (field: string, value: string) => ({ field, operator: 'equals', value });
  const filter = (...rules: object[]) => JSON.stringify({ filters: rules, logic: 'AND' });
  const out: Record<string, string>[] = [{}, { segmentBy: 'department' }, { segmentBy: 'location' }];
  for (let d = 1; d <= 30; d++) out.push({ submittedBefore: day(d) });
  for (let d = 0; d < 30; d += 3) out.push({ submittedAfter: day(d), submittedBefore: day(d + 3) });
  for (let g = 0; g < departments; g++) {
    out.push({ filters: filter(equals('department', `Department ${g}`)), segmentBy: 'location' });
    for (let c = 0; c < cities; c++) {
      const part = filter(equals('department', `Department ${g}`), equals('location', `City ${c}`));
      out.push(
        { filters: part },
        { filters: part, submittedBefore: day(15) },
        { filters: part, submittedAfter: day(15) },
      );
    }
    for (let d = 10; d <= 30; d += 10)
      out.push({ filters: filter(equals('department', `Department ${g}`)), submittedBefore: day(d) });
  }
  return out;
}

export async function run(): Promise<void> {
  const service = await startBenchService('analytics_audit', { layout: 'in-process', poolSize: 10 });
  const client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
  try {
    const { db, organizationId, key, api } = service;
    const survey = (await api('POST', '/api/v1/surveys', { title: 'Audit', questions })).data.id as string;
    await api('POST', `/api/v1/surveys/${survey}/launch`);
    console.log(`Writing ${total} respondents and responses…`);
    await client.query(`
      insert into respondents (organization_id, environment, external_id, email, department, location, attributes, content_hash)
      select '${organizationId}', 'LIVE', 'E-' || g, 'e' || g || '@example.com', 'Department ' || (g % ${departments}),
        'City ' || (g % ${cities}), '{}', 'x'
      from generate_series(1, ${total}) g`);
    await client.query(`
      insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at)
      select 'rsp_' || lpad(g::text, 26, '0'), '${survey}', '${organizationId}', 'LIVE', 'E-' || g, null,
        jsonb_build_array(jsonb_build_object('questionId', 'q_nps', 'value', g % 11),
          jsonb_build_object('questionId', 'q_r1', 'value', 1 + g % 5), jsonb_build_object('questionId', 'q_r2', 'value', 1 + (g * 7) % 5)),
        timestamptz '2026-10-01T00:00:00Z' + (g % 30) * interval '1 day' + (g % 86400) * interval '1 second'
      from generate_series(1, ${total}) g`);
    await client.query('vacuum analyze');

    const queries = releases();
    console.log(`Releasing ${queries.length} results…`);
    const base = `${service.url}/api/v1/surveys/${survey}/analytics/static`;
    const get = async (query: Record<string, string>) => {
      const started = performance.now();
      const response = await fetch(
        `${base}?${Object.entries(query)
          .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
          .join('&')}`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
      if (response.status !== 200)
        throw new Error(`${JSON.stringify(query)}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      return performance.now() - started;
    };
    const releaseTimes: number[] = [];
    for (const query of queries) releaseTimes.push(await get(query));
    const { rows: counted } = await client.query<{ groups: number; state: number }>(
      `select (select count(*)::int from analytics_released_sets where survey_id = $1) as groups,
              (select coalesce(length(state), 0) from analytics_release_audits where survey_id = $1) as state`,
      [survey],
    );
    const groups = counted[0]!.groups;
    const stateBytes = counted[0]!.state;

    const loadBefore = loadavg()[0]!.toFixed(2);
    console.log(`${groups} groups released (state ${(stateBytes / 1e6).toFixed(1)} MB); measuring…`);
    const repeated = await httpLatencies(`${base}?segmentBy=department`, key, rounds, warmup);
    // The audit's own statements for that request, as the gate runs them: its groups' fingerprints, then their lookup.
    const tenant = { organizationId, environment: 'LIVE' as const };
    const scope = {
      tenant,
      surveyId: survey,
      segment: { kind: 'column' as const, column: 'department' as const },
      distinctRespondents: false,
      snapshots: false,
    };
    const gate: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const started = performance.now();
      const prints = await groupSets(db, scope, { members: false });
      await releasedFingerprints(
        db,
        tenant,
        survey,
        prints.map((row) => row.fingerprint),
      );
      gate.push(performance.now() - started);
    }
    // A group never released: a new window each time (the state read, decided, written).
    const fresh: number[] = [];
    for (let i = 0; i < 10; i++)
      fresh.push(await get({ submittedAfter: new Date(Date.UTC(2026, 9, 1, 0, 0, i * 7)).toISOString() }));

    const withAudit = median(repeated);
    const gateMs = median(gate);
    const without = withAudit - gateMs;
    const markdown = [
      '## Analytics: the audit of released results',
      '',
      `\`npm run bench -- analytics-audit\`, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} CPUs shared with the database, 1-min load average ${loadBefore} at the start. ${total.toLocaleString('en')} responses of 3 questions by ${total.toLocaleString('en')} respondents (${departments} departments, ${cities} cities, 30 days); ${queries.length} results released first through HTTP (windows, segments, filters and filters with windows: ${groups} groups, an audit state of ${(stateBytes / 1e6).toFixed(1)} MB). Then static analytics by department, ${rounds} sequential requests after ${warmup} untimed, from a client in its own process. Goal: with the audit at most 1.2× without.`,
      '',
      '| what | p50 ms |',
      '|---|---:|',
      `| static analytics by department, repeated (its groups released before) | ${withAudit.toFixed(1)} |`,
      `| the audit's statements for it (fingerprints of its groups, their lookup), same run | ${gateMs.toFixed(1)} |`,
      `| the same request without the audit (the first less the second) | ${without.toFixed(1)} |`,
      `| releasing a group not seen before (a new window: state read, decided, written) | ${median(fresh).toFixed(1)} |`,
      `| the ${queries.length} releases, each a new result (median) | ${median(releaseTimes).toFixed(1)} |`,
      '',
      `With the audit ÷ without: **${(withAudit / without).toFixed(2)}×** (goal ≤ 1.2×). A repeated release costs one scan of the scope for its fingerprints; keeping fingerprints in the exact daily and segment counts would make it a read of counts like the figures themselves.`,
    ].join('\n');
    console.log(`\n${markdown}`);
    if (process.env.BENCH_WRITE !== 'false') {
      writeBenchmarkSection('## Analytics: the audit of released results', markdown);
      console.log('Written to BENCHMARKS.md.');
    }
  } finally {
    await client.end();
    await service.close();
  }
}
