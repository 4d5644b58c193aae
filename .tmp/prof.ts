import pg from 'pg';
import { loadConfig, type Config } from '../server/src/config.js';
import { createLogger } from '../server/src/logger.js';
import { startService } from '../server/src/service.js';
import { benchDatabase, benchTenant, host } from '../scripts/bench/shared.js';

const database = await benchDatabase('prof');
const config: Config = { ...loadConfig([]), port: 0, host, role: 'api', validateResponses: false, logLevel: 'warn', databasePoolSize: 10 };
const service = await startService(config, database.url, createLogger('warn'));
const client = new pg.Client({ connectionString: database.url });
await client.connect();
const { organizationId, key } = await benchTenant(service.services.db);
const api = async (method: string, url: string, body?: unknown) => {
  const r = await fetch(`${service.url}${url}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await r.json()) as { data: { id: string } };
};
const questions = [{ id: 'q_nps', type: 'nps', text: 'NPS?' }, { id: 'q_r1', type: 'rating', text: 'R1', minLabel: 'a', maxLabel: 'b' }];
const id = (await api('POST', '/api/v1/surveys', { title: 'P', questions })).data.id;
await api('POST', `/api/v1/surveys/${id}/launch`);
await client.query(`insert into respondents (organization_id, environment, external_id, email, department, attributes, content_hash) select '${organizationId}', 'LIVE', 'E-' || g, 'e' || g || '@x.com', 'D' || (g % 20), '{}', 'x' from generate_series(1, 2000) g`);
await client.query(`insert into responses (id, survey_id, organization_id, environment, respondent_external_id, answers, submitted_at) select 'rsp_' || g, '${id}', '${organizationId}', 'LIVE', 'E-' || g, jsonb_build_array(jsonb_build_object('questionId','q_nps','value', g % 11), jsonb_build_object('questionId','q_r1','value', 1 + g % 5)), timestamptz '2026-10-01' + (g % 30) * interval '1 day' from generate_series(1, 2000) g`);
const url = `${service.url}/api/v1/surveys/${id}/analytics/static${process.env.Q ?? ''}`;
const times: number[] = [];
for (let i = 0; i < 200; i++) {
  const s = performance.now();
  const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  await r.text();
  if (!r.ok) throw new Error(String(r.status));
  times.push(performance.now() - s);
}
times.sort((a, b) => a - b);
console.log('p50', times[100]!.toFixed(2), 'p90', times[180]!.toFixed(2));
const meUrl = `${service.url}/api/v1/me`;
const t2: number[] = [];
for (let i = 0; i < 200; i++) { const s = performance.now(); const r = await fetch(meUrl, { headers: { authorization: `Bearer ${key}` } }); await r.text(); t2.push(performance.now() - s); }
t2.sort((a, b) => a - b);
console.log('me p50', t2[100]!.toFixed(2));
await client.end(); await service.close(); await database.release();
