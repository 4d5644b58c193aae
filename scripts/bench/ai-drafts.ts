/**
 * `npm run bench -- ai-drafts`: how well the offline generator's drafts keep to their prompts' subjects.
 *
 * Two labelled sets, judged by test/ai/draft-judge.ts (its own vocabulary per theme, not the generator's bank or
 * cues): the prompts the tests use (test/ai/data/draft-prompts.tsv) and unseen prompts read only here
 * (test/ai/data/draft-prompts-unseen.tsv), which measure how the drafts generalise. Each prompt is drafted with the
 * count the service would ask for (questionCount, else the count the prompt states, else 8), then judged: the
 * share of its questions on its theme, whether it holds the question types the prompt names, its length, and
 * whether createSurvey's own check (`draftProblems`) accepts it as it is.
 *
 * The same run measures a baseline: the generator of another commit (AI_DRAFTS_BASELINE, by default the commit
 * before the drafts kept to their subjects), read from git into a temporary folder, judged by the same judge.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { components } from '../../server/src/generated/openapi.js';
import { draftProblems } from '../../server/src/modules/ai/service.js';
import {
  CLEAR_MAJORITY,
  judge,
  loadPrompts,
  promptsPath,
  unseenPromptsPath,
  type LabelledPrompt,
} from '../../test/ai/draft-judge.js';
import { writeBenchmarkSection } from './shared.js';

type SurveyDraft = components['schemas']['SurveyCreate'];
interface Generator {
  generateOffline(request: { prompt: string; questionCount: number }): SurveyDraft;
  countInPrompt(prompt: string): number | undefined;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The last commit before this benchmark's changes to the generator. */
const DEFAULT_BASELINE = '9f5d999';

/** The generator as it is at `commit`: server/src from git in a temporary folder, importable through tsx. */
async function generatorAt(commit: string): Promise<{ generator: Generator; release(): void }> {
  const folder = mkdtempSync(path.join(tmpdir(), 'ai-drafts-baseline-'));
  const archive = execFileSync('git', ['-C', root, 'archive', commit, 'server/src'], { maxBuffer: 256 * 2 ** 20 });
  execFileSync('tar', ['-x', '-C', folder], { input: archive });
  symlinkSync(path.join(root, 'node_modules'), path.join(folder, 'node_modules'), 'dir');
  const generator = (await import(
    pathToFileURL(path.join(folder, 'server/src/modules/ai/offline-generate.ts')).href
  )) as Generator;
  return { generator, release: () => rmSync(folder, { recursive: true, force: true }) };
}

interface Tally {
  prompts: number;
  questions: number;
  onTheme: number;
  clearMajority: number;
  namingTypes: number;
  typesHeld: number;
  countHonoured: number;
  accepted: number;
  below: string[];
}

/**
 * Drafts every prompt as the service would (the count it asks for), or with `fixedCount` questions, and judges it.
 */
function measure(generator: Generator, set: readonly LabelledPrompt[], fixedCount?: number): Tally {
  const tally: Tally = {
    prompts: set.length,
    questions: 0,
    onTheme: 0,
    clearMajority: 0,
    namingTypes: 0,
    typesHeld: 0,
    countHonoured: 0,
    accepted: 0,
    below: [],
  };
  for (const labelled of set) {
    // service.ts: a questionCount other than the default wins, else the prompt's own count, else the default.
    const asked = labelled.questionCount ?? 8;
    const questionCount = fixedCount ?? (asked === 8 ? (generator.countInPrompt(labelled.prompt) ?? asked) : asked);
    const draft = generator.generateOffline({ prompt: labelled.prompt, questionCount });
    const questions = draft.questions ?? [];
    const verdict = judge({ ...labelled, expectedCount: fixedCount ?? labelled.expectedCount }, questions);
    tally.questions += verdict.total;
    tally.onTheme += verdict.onTheme;
    if (verdict.total > 0 && verdict.onTheme / verdict.total >= CLEAR_MAJORITY) tally.clearMajority++;
    else tally.below.push(`${labelled.prompt} (${labelled.theme}): ${verdict.onTheme}/${verdict.total}`);
    if (labelled.types.length > 0) {
      tally.namingTypes++;
      if (verdict.missingTypes.length === 0) tally.typesHeld++;
    }
    if (verdict.countHonoured) tally.countHonoured++;
    if (draftProblems(draft).length === 0) tally.accepted++;
  }
  return tally;
}

/** Draft lengths measured for every prompt alike: long drafts run out of a topic's questions first. */
const FIXED_COUNTS = [3, 8, 20, 30];

const pct = (part: number, whole: number) => (whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)} %`);

function row(set: string, generator: string, t: Tally): string {
  return `| ${set} | ${generator} | ${t.prompts} | ${t.onTheme}/${t.questions} (${pct(t.onTheme, t.questions)}) | ${t.clearMajority}/${t.prompts} (${pct(t.clearMajority, t.prompts)}) | ${t.typesHeld}/${t.namingTypes} | ${t.countHonoured}/${t.prompts} | ${t.accepted}/${t.prompts} |`;
}

export async function run(): Promise<void> {
  const baselineCommit = process.env.AI_DRAFTS_BASELINE ?? DEFAULT_BASELINE;
  const current = (await import('../../server/src/modules/ai/offline-generate.js')) as Generator;
  const baseline = await generatorAt(baselineCommit);
  const sets = [
    { name: 'labelled (tests)', prompts: loadPrompts(promptsPath) },
    { name: 'unseen (benchmark only)', prompts: loadPrompts(unseenPromptsPath) },
  ];
  const rows: string[] = [];
  const lengths: string[] = [];
  const below: string[] = [];
  try {
    for (const set of sets)
      for (const [name, generator] of [
        [`before (${baselineCommit})`, baseline.generator],
        ['after (this tree)', current],
      ] as const) {
        const tally = measure(generator, set.prompts);
        rows.push(row(set.name, name, tally));
        console.log(set.name, name, { ...tally, below: tally.below.length });
        for (const line of tally.below) console.log(`  below ${Math.round(CLEAR_MAJORITY * 100)} %: ${line}`);
        if (generator === current) below.push(...tally.below.map((line) => `- ${set.name}: ${line}`));
        const shares = FIXED_COUNTS.map((n) => {
          const fixed = measure(generator, set.prompts, n);
          return `${pct(fixed.onTheme, fixed.questions)} (${fixed.clearMajority}/${fixed.prompts})`;
        });
        lengths.push(`| ${set.name} | ${name} | ${shares.join(' | ')} |`);
      }
  } finally {
    baseline.release();
  }

  writeBenchmarkSection(
    '## AI survey drafts (offline)',
    `## AI survey drafts (offline)

Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench -- ai-drafts\` (Node ${process.version}; in process, no database: quality, not speed). Each labelled prompt is drafted by the offline generator with the count the service asks for (questionCount, else the count the prompt states, else 8) and judged by \`test/ai/draft-judge.ts\`, whose vocabulary per theme is its own (not the question bank's cues or texts; it reads a question's text and a grid's rows, never the choices). Two sets: the prompts the tests use (\`test/ai/data/draft-prompts.tsv\`: the reported failures and the themes of the bank, then a first "unseen" set whose failures were looked at, so it joined them) and unseen prompts read only by this benchmark (\`test/ai/data/draft-prompts-unseen.tsv\`, written after the generator's changes and never used to tune it). "Before" is the generator of commit ${baselineCommit}, read from git and judged by the same judge in the same run.

| set | generator | prompts | questions on the prompt's theme | drafts with a clear majority (≥ 2/3) on theme | named types held | count honoured | accepted by createSurvey's check |
|---|---|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

The same prompts drafted at fixed lengths: questions on the prompt's theme (drafts with a clear majority on theme).

| set | generator | ${FIXED_COUNTS.map((n) => `${n} questions`).join(' | ')} |
|---|---|${FIXED_COUNTS.map(() => '---:').join('|')}|
${lengths.join('\n')}

Drafts of this tree under two thirds on their theme:
${below.length > 0 ? below.join('\n') : '- none'}`,
  );
}
