/**
 * The manager hierarchy: targeting `under` in a distribution preview over BENCH_RESPONDENTS (default 100,000)
 * respondents in a tree about 11 levels deep (each manager has three reports), against the hand-written recursive SQL
 * that answers the same preview (the count and the first ten), measured in the same run.
 *
 *   npm run bench -- hierarchy
 *
 * The service (API and worker) runs in this process; the previews are sequential POSTs after BENCH_WARMUP (5)
 * untimed ones, and the SQL runs over its own connection. Rows: the whole company (under the root), a large branch,
 * a department and a small team. Goal: the service within 1.5× of the SQL.
 */
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { median, sqlLatencies, startBenchService, writeBenchmarkSection } from './shared.js';

const total = Number(process.env.BENCH_RESPONDENTS ?? 100_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
const warmup = Number(process.env.BENCH_WARMUP ?? 5);

/** What one writes by hand: the organization below $3 by a recursive CTE, counted, and its first ten people. */
const handWritten = [
  `with recursive org as (
     select external_id from respondents where organization_id = $1 and environment = $2 and manager_id = $3
     union all
     select r.external_id from respondents r join org o on r.manager_id = o.external_id
     where r.organization_id = $1 and r.environment = $2
   ) select count(*) from org`,
  `with recursive org as (
     select external_id from respondents where organization_id = $1 and environment = $2 and manager_id = $3
     union all
     select r.external_id from respondents r join org o on r.manager_id = o.external_id
     where r.organization_id = $1 and r.environment = $2
   ) select p.external_id, p.email, p.first_name, p.last_name, p.department, p.location, p.job_title
     from respondents p where p.organization_id = $1 and p.environment = $2 and p.external_id in (select external_id from org)
     order by p.external_id limit 10`,
];

export async function run(): Promise<void> {
  const service = await startBenchService('hierarchy', { layout: 'in-process', role: 'all', poolSize: 10 });
  const client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
  try {
    const { organizationId, key, api } = service;
    const surveyId = (
      await api('POST', '/api/v1/surveys', {
        title: 'Hierarchy',
        questions: [{ type: 'nps', text: 'How likely are you to recommend working here?' }],
      })
    ).data.id;

    console.log(`Writing ${total} respondents, each manager with three reports…`);
    // E-1 is the root; E-g reports to E-(g / 3), so the tree is about log3(total) levels deep.
    await client.query(
      `
      insert into respondents (organization_id, environment, external_id, email, location, manager_id, attributes, content_hash)
      select $1, 'LIVE', 'E-' || g, 'e' || g || '@example.com', 'City ' || (g % 7),
        case when g = 1 then null when g < 3 then 'E-1' else 'E-' || (g / 3) end, '{}', 'x'
      from generate_series(1, ${total}) g`,
      [organizationId],
    );
    await client.query('vacuum analyze respondents');
    const depth = await client.query<{ depth: number }>(
      `with recursive chain as (select external_id, manager_id, 1 as depth from respondents
         where organization_id = $1 and environment = 'LIVE' and external_id = $2
       union all select r.external_id, r.manager_id, c.depth + 1 from respondents r join chain c on r.external_id = c.manager_id
         where r.organization_id = $1 and r.environment = 'LIVE')
       select max(depth)::int as depth from chain`,
      [organizationId, `E-${total}`],
    );

    const preview = async (manager: string) => {
      const start = performance.now();
      const response = await fetch(`${service.url}/api/v1/surveys/${surveyId}/distribute/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ targeting: { filters: [{ field: 'managerId', operator: 'under', value: manager }] } }),
      });
      const body = (await response.json()) as { data: { matchedCount: number } };
      if (!response.ok) throw new Error(`preview: ${response.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - start, matched: body.data.matchedCount };
    };

    const rows: Array<{ name: string; matched: number; service: number[]; sql: number[] }> = [];
    const measure = async (name: string, manager: string) => {
      const params = [organizationId, 'LIVE', manager];
      for (let i = 0; i < warmup; i++) await preview(manager);
      await sqlLatencies(client, 3, handWritten, [params, params]);
      const sql = await sqlLatencies(client, rounds, handWritten, [params, params]);
      const times: number[] = [];
      let matched = 0;
      for (let i = 0; i < rounds; i++) {
        const result = await preview(manager);
        times.push(result.ms);
        matched = result.matched;
      }
      const expected = Number((await client.query<{ count: string }>(handWritten[0]!, params)).rows[0]!.count);
      if (matched !== expected) throw new Error(`${name}: the preview matched ${matched}, the SQL ${expected}`);
      rows.push({ name, matched, service: times, sql });
      console.log(
        `${name} (${matched} people): service p50 ${median(times).toFixed(1)} ms, hand-written SQL p50 ${median(sql).toFixed(1)} ms`,
      );
    };
    const loadBefore = loadavg()[0]!.toFixed(2);
    await measure('the whole company (under the root)', 'E-1');
    await measure('a large branch', 'E-4');
    await measure('a department', 'E-40');
    await measure('a small team', 'E-4000');

    const table = rows.map(
      (row) =>
        `| ${row.name} | ${row.matched.toLocaleString('en')} | ${median(row.service).toFixed(1)} | ${median(row.sql).toFixed(1)} | ${(median(row.service) / median(row.sql)).toFixed(2)} |`,
    );
    writeBenchmarkSection(
      '## Manager hierarchy',
      [
        '## Manager hierarchy',
        '',
        `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench -- hierarchy\` (${cpus().length} CPUs shared with the database, ` +
          `1-min load average ${loadBefore} at the start). ${total.toLocaleString('en')} respondents, each manager with three reports, ` +
          `${depth.rows[0]?.depth ?? '?'} levels. A distribution preview with \`{field: "managerId", operator: "under"}\` (its count and first ten people, ` +
          `through HTTP, p50 of ${rounds} sequential requests after ${warmup} untimed) against the hand-written recursive SQL that returns the same ` +
          'count and ten rows over its own connection, in the same run (two statements: it walks twice). Goal: at most 1.5×. `under` compiles to ' +
          'that recursive CTE (tenant-scoped at every step, UNION as the cycle guard) as `external_id = any(array(…))`, so its people are read by ' +
          'one pass over the key index in key order; the preview counts and samples them in one statement, which also leaves out inactive SCIM users.',
        '',
        '| preview under | people | service p50 (ms) | hand-written SQL p50 (ms) | ratio |',
        '|---|---|---|---|---|',
        ...table,
      ].join('\n'),
    );
  } finally {
    await client.end();
    await service.close();
  }
}
