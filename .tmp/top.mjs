import fs from 'node:fs';
const file = process.argv[2];
const p = JSON.parse(fs.readFileSync(file, 'utf8'));
const self = new Map(); const byId = new Map(p.nodes.map(n => [n.id, n]));
const dt = new Map();
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
for (const n of p.nodes) { const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt.get(n.id) ?? 0)); }
const total = [...self.values()].reduce((a, b) => a + b, 0);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 35)) console.log((v / 1000).toFixed(0).padStart(7), 'ms', (100 * v / total).toFixed(1).padStart(5), '%', k);
