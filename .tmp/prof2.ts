import pg from 'pg';
import { loadConfig, type Config } from '../server/src/config.js';
import { createLogger } from '../server/src/logger.js';
import { startService } from '../server/src/service.js';
import { benchDatabase, benchTenant, host } from '../scripts/bench/shared.js';
import * as repository from '../server/src/modules/analytics/repository.js';
import { contextOf, measureScope, parseSegment, getStaticAnalytics } from '../server/src/modules/analytics/service.js';

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
const questions = [
  { id: 'q_nps', type: 'nps', text: 'How likely are you to recommend working here?' },
  ...Array.from({ length: 6 }, (_, i) => ({ id: `q_r${i + 1}`, type: 'rating', text: `Rating statement ${i + 1}`, minLabel: 'Disagree', maxLabel: 'Agree', required: false })),
  { id: 'q_where', type: 'single_choice', text: 'Where do you work?', required: false, choices: [{ id: 'c_1', label: 'Office' }, { id: 'c_2', label: 'Home' }, { id: 'c_3', label: 'Hybrid' }] },
  { id: 'q_perks', type: 'multiple_choice', text: 'Which benefits matter?', required: false, maxSelections: 3, choices: [{ id: 'c_1', label: 'Learning' }, { id: 'c_2', label: 'Flex' }, { id: 'c_3', label: 'Health' }, { id: 'c_4', label: 'Leave' }] },
  { id: 'q_text', type: 'text', text: 'What should we change?', required: false },
];
const id = (await api('POST', '/api/v1/surveys', { title: 'P', questions })).data.id;
await api('POST', `/api/v1/surveys/${id}/launch`);
const n = 30000;
await client.query(`insert into respondents (organization_id, environment, external_id, email, department, attributes, content_hash) select '${organizationId}', 'LIVE', 'E-' || g, 'e' || g || '@x.com', 'Department ' || (g % 20), '{}', 'x' from generate_series(1, ${n}) g`);
await client.query(`insert into responses (id, survey_id, organization_id, environment, respondent_external_id, answers, submitted_at)
 select 'rsp_' || g, '${id}', '${organizationId}', 'LIVE', 'E-' || g, jsonb_build_array(
        jsonb_build_object('questionId', 'q_nps', 'value', g % 11),
        jsonb_build_object('questionId', 'q_r1', 'value', 1 + g % 5), jsonb_build_object('questionId', 'q_r2', 'value', 1 + (g * 31) % 5),
        jsonb_build_object('questionId', 'q_r3', 'value', 1 + (g * 37) % 5), jsonb_build_object('questionId', 'q_r4', 'value', 1 + (g * 41) % 5),
        jsonb_build_object('questionId', 'q_r5', 'value', 1 + (g * 43) % 5), jsonb_build_object('questionId', 'q_r6', 'value', 1 + (g * 47) % 5),
        jsonb_build_object('questionId', 'q_where', 'value', 'c_' || (1 + g % 3)),
        jsonb_build_object('questionId', 'q_perks', 'value', jsonb_build_array('c_' || (1 + g % 4), 'c_' || (1 + (g + 1) % 4))),
        jsonb_build_object('questionId', 'q_text', 'value', 'Answer number ' || g)),
 timestamptz '2026-10-01' + (g % 30) * interval '1 day' from generate_series(1, ${n}) g`);
await client.query('vacuum analyze');
const url = `${service.url}/api/v1/surveys/${id}/analytics/static?segmentBy=department`;
const db = service.services.db;
const tenant = { organizationId, environment: 'LIVE' as const };
const time = async (label: string, f: () => Promise<unknown>) => {
  for (let i = 0; i < 20; i++) await f();
  const t: number[] = [];
  for (let i = 0; i < 100; i++) { const s = performance.now(); await f(); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(label, 'p50', t[50]!.toFixed(2));
};
for (let k = 0; k < 20; k++) { const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } }); await r.text(); }
const time2 = async (label: string, f: () => Promise<unknown>) => {
  for (let i = 0; i < 20; i++) await f();
  const t: number[] = [];
  for (let i = 0; i < 200; i++) { const s = performance.now(); await f(); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(label, 'p50', t[100]!.toFixed(2));
};
const segment = parseSegment('department');
const ctx = await contextOf(db, tenant, id, { segmentBy: 'department' }, segment);
await time2('getStaticAnalytics', () => getStaticAnalytics(db, tenant, id, { segmentBy: 'department' }));
await time2('contextOf', () => contextOf(db, tenant, id, { segmentBy: 'department' }, segment));
await time2('measureScope', () => measureScope(db, ctx.scope, 5));
await time2('segmentCellCounts', () => repository.segmentCellCounts(db, ctx.scope));
await time2('dailyCellCounts', () => repository.dailyCellCounts(db, ctx.scope));
await time2('http me', async () => { const r = await fetch(`${service.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } }); await r.text(); });
await time2('http dept', async () => { const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } }); await r.text(); });
const t0 = performance.now();
for (let k = 0; k < 600; k++) { const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } }); await r.text(); }
console.log('avg ms', ((performance.now() - t0) / 600).toFixed(2));
await client.end(); await service.close(); await database.release();
