import pg from 'pg';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/segprof' }); await c.connect();
const ans = JSON.stringify([{ questionId: 'q_nps', value: 9 }, { questionId: 'q_r1', value: 3 }]);
let seq = 0;
for (const mode of ['param', 'literal', 'param']) {
  const s = performance.now();
  for (let i = 0; i < 400; i++) {
    const id = `rsp_node_${process.pid}_${seq++}`;
    if (mode === 'param') await c.query(`insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at) values ($1, $2, $3, 'LIVE', $4, null, $5, now())`, [id, 'srv_01M896X5VNNY2K9DNJ52KYPCWC', 'org_01M896X5QM21SN3JNX8TF4EWYD', null, ans]);
    else await c.query(`insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at) values ('${id}', 'srv_01M896X5VNNY2K9DNJ52KYPCWC', 'org_01M896X5QM21SN3JNX8TF4EWYD', 'LIVE', null, null, '${ans}', now())`);
  }
  console.log(mode, ((performance.now() - s) * 1000 / 400).toFixed(0), 'µs');
}
await c.end();
