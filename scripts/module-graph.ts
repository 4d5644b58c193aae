/**
 * `npm run graph`: the feature modules of server/src and which uses which, written to docs/module-graph.md as a
 * Mermaid chart; `--check` compares instead of writing (run by `npm run lint`).
 *
 * dependency-cruiser already refuses file-level cycles and imports that skip a module's index.ts. This adds the
 * module-level view: an edge A → B means a file of A imports B's index.ts, and the graph of modules must have no
 * cycle either (A → B → A through two different files is a cycle of responsibilities even when no file cycle
 * exists).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'docs/module-graph.md');

interface CruiseResult {
  modules: { source: string; dependencies: { resolved: string }[] }[];
}

const moduleOf = (path: string) => /^server\/src\/modules\/([^/]+)\//.exec(path)?.[1];

export function moduleEdges(): Map<string, Set<string>> {
  const json = execFileSync(
    join(root, 'node_modules/.bin/depcruise'),
    [
      'server/src',
      '--config',
      '.dependency-cruiser.cjs',
      '--include-only',
      '^server/src/modules/',
      '--output-type',
      'json',
    ],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  ).toString();
  const result = JSON.parse(json) as CruiseResult;
  const edges = new Map<string, Set<string>>();
  for (const file of result.modules) {
    const from = moduleOf(file.source);
    if (!from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    for (const dependency of file.dependencies) {
      const to = moduleOf(dependency.resolved);
      if (to && to !== from) edges.get(from)!.add(to);
    }
  }
  return edges;
}

/** A cycle among modules, as a path from a module back to itself, or undefined. */
export function moduleCycle(edges: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...edges.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

function render(edges: Map<string, Set<string>>): string {
  const lines = [...edges.keys()]
    .sort()
    .flatMap((from) => {
      const targets = [...edges.get(from)!].sort();
      return targets.length === 0 ? [`  ${from}`] : targets.map((to) => `  ${from} --> ${to}`);
    })
    .map((line) => line.replace(/[a-z]+(-[a-z]+)*/g, (name) => name.replace(/-/g, '_')));
  return [
    '# Module graph',
    '',
    '<!-- Written by `npm run graph` from the imports of server/src/modules; `npm run lint` checks it. -->',
    '',
    'Each feature module of `server/src/modules/`, and the modules it uses. Every arrow is an import of the',
    "target's `index.ts`: dependency-cruiser refuses any other file of another module, and any cycle (of files,",
    'and here of modules). The HTTP layer, the job registry and the start-up code use the modules the same way;',
    "`db/schema.ts` reads each module's `tables.ts` and `modules/handlers.ts` each module's `handlers.ts`.",
    '',
    '```mermaid',
    'flowchart LR',
    ...lines,
    '```',
    '',
  ].join('\n');
}

const edges = moduleEdges();
const cycle = moduleCycle(edges);
if (cycle) {
  console.error(`The modules form a cycle: ${cycle.join(' → ')}`);
  process.exit(1);
}
const text = render(edges);
if (process.argv.includes('--check')) {
  if (readFileSync(target, 'utf8') !== text) {
    console.error('docs/module-graph.md is stale: run `npm run graph` and commit it.');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
}
