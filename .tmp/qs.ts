import { questionStats } from '../server/src/modules/analytics/statistics.js';
const qs: any[] = [
  { id: 'q_nps', type: 'nps', text: 'x' },
  ...Array.from({ length: 6 }, (_, i) => ({ id: `q_r${i}`, type: 'rating', text: 'r', min: 1, max: 5 })),
  { id: 'w', type: 'single_choice', text: 'w', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }, { id: 'c', label: 'C' }] },
  { id: 'p', type: 'multiple_choice', text: 'p', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }, { id: 'c', label: 'C' }, { id: 'd', label: 'D' }] },
  { id: 't', type: 'text', text: 't' },
];
const hs = qs.map((q) => new Map(q.type === 'nps' ? Array.from({ length: 11 }, (_, v) => [v, 100 + v]) : q.type === 'rating' ? [[1, 5], [2, 7], [3, 9], [4, 11], [5, 13]] : q.type === 'text' ? Array.from({ length: 7 }, (_, v) => [15 + v, 10]) : [[0, 4], [1, 5], [2, 6], [99999, 10]]));
for (let r = 0; r < 5; r++) {
  const s = performance.now();
  for (let i = 0; i < 1000; i++) for (let g = 0; g < 21; g++) qs.forEach((q, p) => questionStats(q, hs[p]));
  console.log('per request (21 groups):', ((performance.now() - s) / 1000).toFixed(3), 'ms');
}
for (const [p, q] of qs.entries()) {
  const s = performance.now();
  for (let i = 0; i < 100000; i++) questionStats(q, hs[p]);
  console.log(q.type, ((performance.now() - s) / 100).toFixed(3), 'µs');
}
