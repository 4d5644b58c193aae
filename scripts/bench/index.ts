/**
 * `npm run bench -- <name>`: runs one benchmark of scripts/bench by name. Each module exports `run()`.
 * Add an entry per benchmark.
 */
const benchmarks: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  surveys: () => import('./surveys.js'),
  sync: () => import('./sync.js'),
  distributions: () => import('./distributions.js'),
  exports: () => import('./exports.js'),
  analytics: () => import('./analytics.js'),
  'analytics-writes': () => import('./analytics-writes.js'),
  'analytics-as-asked': () => import('./analytics-as-asked.js'),
  'analytics-audit': () => import('./analytics-audit.js'),
  'audit-log': () => import('./audit-log.js'),
  retention: () => import('./retention.js'),
  webhooks: () => import('./webhooks.js'),
  'request-path': () => import('./request-path.js'),
  'request-path-ab': () => import('./request-path-ab.js'),
  'submission-sql': () => import('./submission-sql.js'),
  ai: () => import('./ai.js'),
  'ai-drafts': () => import('./ai-drafts.js'),
  citus: () => import('./citus.js'),
  hierarchy: () => import('./hierarchy.js'),
  encoding: () => import('./encoding.js'),
  outage: () => import('./outage.js'),
};

const name = process.argv[2];
const load = name ? benchmarks[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(benchmarks).join('|')}>`);
  process.exit(2);
}
await (await load()).run();
