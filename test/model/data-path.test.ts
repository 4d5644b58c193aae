/**
 * A model-based test of the whole data path, against the real server and PostgreSQL (SDK over HTTP, answer pages
 * through `fetch` on their `/s/{token}` links, e-mail through a real SMTP server): surveys and their lifecycle,
 * API and answer-page submissions, deletions, respondent changes (PUT, sync, delete), distributions (link and
 * e-mail), full and incremental exports (JSON, NDJSON, CSV) with their deletions lists, the anonymity threshold,
 * static analytics, and privacy requests (access files, erasures of either scope, dry runs, with their inventories)
 * — every figure compared with the model (model.ts) after random command sequences (commands.ts). After an erasure
 * every later comparison holds the person's responses deleted or without identity, as the product promises.
 * Its surveys ask every type whose answers and figures differ: NPS, rating, matrix (a scale and labelled columns,
 * with N/A and unanswered rows), ranking, number, date, and a single choice with "Other".
 *
 * `npm test` runs a fixed seed (100 sequences, about a minute); `npm run model` runs campaigns (1,000 sequences
 * by default, a random seed, printed first):
 *   MODEL_RUNS=2000 npm run model                         # another random seed
 *   MODEL_SEED=123 MODEL_RUNS=500 npm run model           # a given seed
 *   MODEL_SEED=123 MODEL_PATH='42:1:0' MODEL_REPLAY='AAEUE:V' npm run model
 *                                                         # replays one counterexample: the seed and path fast-check
 *                                                         # prints, and the replayPath in its command list
 *   MODEL_MAX_COMMANDS=60 MODEL_TIME_LIMIT_S=600 …        # longer sequences; a bound on the whole run (shrinking too)
 * Each sequence runs in an organization of its own, on one server for the whole run. An unknown discrepancy
 * fails at once and is shrunk (the smallest sequence, its seed and path, and a log of what it did are printed);
 * known ones still open (findings.ts, `OPEN`) are recorded, the run goes on, and the test fails at its end while
 * any was met — each also has a focused test below ("findings") that replays its minimal sequence.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { startWithSmtp } from '../distributions/fixtures.js';
import type { TestSmtp } from '../distributions/smtp.js';
import {
  commandArbs,
  coverage,
  CreateSurvey,
  DeleteResponse,
  Erase,
  ExportFull,
  removeExportFolder,
  Distribute,
  ReadAnalytics,
  SetThreshold,
  SubmitApi,
  SubmitLink,
  type Cmd,
} from './commands.js';
import { FINDINGS, met, recording } from './findings.js';
import { initialArb, runSequence, type Harness, type Initial } from './harness.js';
import { NO_ANSWER, POPULATION } from './model.js';

const campaign = process.env.MODEL_CAMPAIGN === '1';
const seed = process.env.MODEL_SEED ? Number(process.env.MODEL_SEED) : campaign ? Date.now() % 2 ** 31 : 20261125;
const numRuns = process.env.MODEL_RUNS ? Number(process.env.MODEL_RUNS) : 100;
const replayPath = process.env.MODEL_PATH || undefined;
/** The commands' own replay path: the `replayPath` printed inside a counterexample's command list. */
const commandsPath = process.env.MODEL_REPLAY || undefined;
const timeLimitS = process.env.MODEL_TIME_LIMIT_S ? Number(process.env.MODEL_TIME_LIMIT_S) : campaign ? 6 * 3600 : 240;
const maxCommands = process.env.MODEL_MAX_COMMANDS ? Number(process.env.MODEL_MAX_COMMANDS) : 35;

let t: TestService;
let smtp: TestSmtp;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await removeExportFolder();
});

/** Situations the default run must meet (coverage lines of commands.ts). */
const MUST_COVER = [
  'analytics: shown, a matrix row N/A',
  'analytics: shown, a matrix row unanswered',
  'analytics: shown, a ranking',
  'analytics: shown, an "Other" answer',
  'analytics: shown after a matrix or ranking answer was deleted',
  'export: increment lists a deleted matrix or ranking answer',
  'export: csv with records',
  'answer page: 200',
  'privacy: access file with responses',
  'privacy: dry run compared with the real run',
  'privacy: erasure (identity) of responses',
  'privacy: erasure (identity_and_responses) of responses',
];

/** Commands run, by kind (shrinking included), for the summary. */
const executed = new Map<string, number>();
/** Sequences run (fewer than asked for when the time limit interrupted the run). */
let sequences = 0;

describe('the data path against its model', () => {
  it(
    `matches the model over ${numRuns} command sequences (seed ${seed})`,
    { timeout: (timeLimitS + 120) * 1000 },
    async () => {
      console.log(
        `model: seed ${seed}, ${numRuns} runs${replayPath ? `, path ${replayPath}` : ''} — a failure is replayed with MODEL_SEED=${seed} MODEL_PATH='<path>' MODEL_REPLAY='<replayPath>' npm run model`,
      );
      const started = Date.now();
      // Open findings are recorded, not thrown, while the property runs (the focused tests below turn it off).
      recording.on = true;
      await fc.assert(
        fc.asyncProperty(
          initialArb,
          fc.commands(commandArbs, { maxCommands, size: 'max', ...(commandsPath ? { replayPath: commandsPath } : {}) }),
          async (initial, commands) => {
            sequences++;
            const harness: Harness = {
              t,
              smtp,
              onCommand: (c) => {
                const kind = c.toString().replace(/\(.*$/, '');
                executed.set(kind, (executed.get(kind) ?? 0) + 1);
              },
            };
            await runSequence(harness, initial, commands);
          },
        ),
        {
          seed,
          numRuns,
          path: replayPath,
          verbose: 1,
          // Shrinking reruns whole sequences against the server: bounded, so that a failing `npm test` still ends
          // (with the smallest counterexample found by then); campaigns take MODEL_TIME_LIMIT_S.
          plugins: [fc.interruptAfterTimeLimit(timeLimitS * 1000)],
        },
      );
      recording.on = false;
      console.log(
        `model: coverage:\n${[...coverage]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, n]) => `  ${k}: ${n}`)
          .join('\n')}`,
      );
      console.log(
        `model: ${sequences} of ${numRuns} sequences run in ${((Date.now() - started) / 1000).toFixed(1)} s; commands run: ${[
          ...executed,
        ]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
      );
      // The fixed seed's whole run must meet these situations, or they go unchecked: no other test covers a
      // grid or ranking answer deleted before an increment (listed in its deletions, gone from the figures). A
      // change of the commands that loses one must pick another seed, or cover it another way.
      if (!campaign && seed === 20261125 && numRuns >= 100 && sequences === numRuns && !replayPath) {
        const missing = MUST_COVER.filter((what) => !coverage.get(what));
        expect(missing, 'situations the fixed seed no longer meets').toEqual([]);
      }
      // The open findings the run met (each has a focused test below that replays it).
      expect(
        [...met].map(([finding, detail]) => `${finding}: ${FINDINGS[finding]}\n${detail}`),
        'open findings met by the run',
      ).toEqual([]);
    },
  );
});

/**
 * The minimal command sequences of the model's findings (findings.ts), replayed through the same model: the first
 * three failed until be69bdd and now guard against a regression; an open one fails until the server is fixed.
 */
describe('findings', () => {
  const strict = (initial: Initial, commands: Cmd[]) => {
    recording.on = false;
    return runSequence({ t, smtp }, initial, commands);
  };
  const nobody = { kind: 'nobody' as const };
  const nobodyAnswers = (values: number[]) => values.map((nps) => ({ who: nobody, answer: { ...NO_ANSWER, nps } }));
  const wholeSurvey = { segment: false, distribution: null, filter: null, window: null };

  it('negative-halves: NPS −93.75 is rounded to −93.8, as 93.75 is to 93.8', async () => {
    await strict({ people: Array(POPULATION).fill(undefined), allowMultiple: false, anonymous: false }, [
      // 15 promoters and a passive: 93.75 → 93.8 (agrees with the model).
      new SubmitApi(0, nobodyAnswers([...Array(15).fill(10), 7])),
      new ReadAnalytics(0, wholeSurvey),
      // 15 detractors and a passive: −93.75 → −93.8 by the model (the server said −93.7 before be69bdd).
      new CreateSurvey(false, false, true),
      new SubmitApi(1, nobodyAnswers([...Array(15).fill(0), 7])),
      new ReadAnalytics(1, wholeSurvey),
    ]);
  });

  it('tie-order: the subtraction guard hides the same one of equally small groups whichever way the breakdown is computed', async () => {
    // Two groups of 3 and one of 1 at threshold 3: the 1 is suppressed, and the guard must hide one of the 3s as
    // well. The model hides the first by value (null last). Before be69bdd the server hid whichever PostgreSQL
    // returned first, which differed between its exact counts (a plain breakdown) and a scan (the same breakdown
    // with a window that changes nothing, or a survey taking several responses per person) and between query
    // plans — so two answers could show each of the 3s once, and the total minus both gave away the group of 1.
    // Several layouts, so that whatever order a plan happens to use, some layout would meet a disagreement.
    const layouts: Initial['people'][] = [
      ['Ops', 'Ops', 'Ops', 'Eng', 'Eng', 'Eng', 'Sales'],
      ['Sales', 'Sales', 'Sales', 'Ops', 'Ops', 'Ops', 'Eng'],
      ['Eng', 'Eng', 'Eng', null, null, null, 'Ops'],
      ['Sales', 'Sales', 'Sales', 'Eng', 'Eng', 'Eng', null],
    ].map((layout) => [...layout, ...Array<undefined>(POPULATION - layout.length).fill(undefined)]);
    const failures: string[] = [];
    for (const people of layouts) {
      for (const allowMultiple of [false, true]) {
        await strict({ people, allowMultiple, anonymous: false }, [
          new SetThreshold(3),
          new SubmitApi(
            0,
            [0, 1, 2, 3, 4, 5, 6].map((index) => ({
              who: { kind: 'person' as const, index },
              answer: { ...NO_ANSWER, nps: 4 + index },
            })),
          ),
          new ReadAnalytics(0, { segment: true, distribution: null, filter: null, window: { kind: 'noop' } }),
        ]).catch((error: Error) =>
          failures.push(error.message.split('\n').find((line) => line.startsWith('static analytics')) ?? error.message),
        );
      }
    }
    expect(failures, FINDINGS['tie-order']).toEqual([]);
  });

  it('anonymous-responded-at: nothing ties an anonymous answer given through a personal link to its person', async () => {
    const people: Initial['people'] = [
      'Eng',
      'Eng',
      'Ops',
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ];
    await strict({ people, allowMultiple: false, anonymous: true }, [
      new Distribute(0, 'link', null),
      new SubmitLink(0, [{ recipient: 1, answer: { ...NO_ANSWER, nps: 3 } }]),
    ]);
  });

  it("erased-respondents: after an erasure of identity, one person's responses still count as one respondent", async () => {
    // A survey taking several responses per person, threshold 3: P-00 answers three times, P-01 once — two
    // respondents, so the whole result is suppressed. Erasing P-00's identity must keep every figure (the
    // reference: "still counted in every figure"); the server then counts four respondents and shows the result,
    // P-01's answer among P-00's three (the erasure compares the figures of the surveys it reached).
    const by = (index: number, nps: number) => ({
      who: { kind: 'person' as const, index },
      answer: { ...NO_ANSWER, nps },
    });
    await strict({ people: Array(POPULATION).fill(undefined), allowMultiple: true, anonymous: false }, [
      new SetThreshold(3),
      new SubmitApi(0, [by(0, 1), by(0, 2), by(0, 3), by(1, 4)]),
      new ReadAnalytics(0, wholeSurvey),
      new Erase({ by: 'person', index: 0, email: false, upper: false }, 'identity', 'real'),
    ]);
  });

  it('erased-deleted-exports: an erasure deletes the export files that hold a response of theirs deleted since', async () => {
    // P-03's response is exported, then deleted (deleteResponse); the file still holds their id and answers. Their
    // erasure must count that file and delete it (410 export_erased); the server finds files by live responses
    // only, so the inventory says 0 export files and the file stays downloadable, showing P-03.
    await strict({ people: Array(POPULATION).fill(undefined), allowMultiple: false, anonymous: false }, [
      new SubmitApi(0, [
        { who: { kind: 'person', index: 3 }, answer: { ...NO_ANSWER, nps: 9 } },
        { who: { kind: 'person', index: 4 }, answer: { ...NO_ANSWER, nps: 2 } },
      ]),
      new ExportFull(0, 'json'),
      new DeleteResponse(0),
      new Erase({ by: 'person', index: 3, email: false, upper: false }, 'identity_and_responses', 'real'),
    ]);
  });
});
