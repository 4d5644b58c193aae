/**
 * The commands of the model-based test: each changes or reads the real service (SDK over HTTP, answer pages through
 * `fetch`) and the model (model.ts) and compares what it can see. Commands hold selectors (small integers) that
 * are resolved against the model when they run, so that fast-check can drop commands while shrinking.
 */
import { readFile, rm } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { exportResponsesToFile, type components } from '@survey-service/sdk';
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.js';
import type { TestSmtp } from '../distributions/smtp.js';
import { forgetReleases } from '../analytics/fixtures.js';
import { parseCsv } from '../exports/fixtures.js';
import { found, foundOpen } from './findings.js';
import {
  answersOf,
  applyErasure,
  expectedAccessFile,
  holdingsOf,
  inventoryOf,
  pseudonymOf,
  type MHoldings,
  type MSubject,
  DATE_MAX,
  DATE_MIN,
  GRID_MAX,
  GRID_MIN,
  GRID_ROWS,
  OFTEN_COLUMNS,
  OFTEN_ROWS,
  RANK_CHOICES,
  WHERE_CHOICES,
  type ModelAnswer,
  BOUNCING_PERSON,
  DEPARTMENTS,
  describeFilter,
  expectedExport,
  expectedStatic,
  groupSizes,
  respondentsOf,
  scopeOf,
  suppressedValues,
  latestReaching,
  live,
  matches,
  personId,
  QUESTIONS,
  strangerId,
  tick,
  type Dept,
  type DeptFilter,
  type MDistribution,
  type MExport,
  type Model,
  type MRecipient,
  type MResponse,
  type MSurvey,
  type StaticQuery,
} from './model.js';

export type Client = ReturnType<TestService['client']>;

export interface Real {
  t: TestService;
  smtp: TestSmtp;
  client: Client;
  organizationId: string;
  /** A log of what the run did, printed with a failure. */
  log: string[];
  /** The latest dry run of an erasure: its subject, the inventory the model expected and the one it reported. */
  lastDryRun?: { subject: string; expected: unknown; inventory: unknown };
}

export type Cmd = fc.AsyncCommand<Model, Real>;

/** How often interesting situations were compared, for the summary (a model that never meets them proves little). */
export const coverage = new Map<string, number>();
const saw = (what: string) => coverage.set(what, (coverage.get(what) ?? 0) + 1);

const pollFast = { initialDelayMs: 20, maxDelayMs: 60, timeoutMs: 60_000 };
const files = mkdtempSync(path.join(tmpdir(), 'model-exports-'));
/** Removes the folder where export files are downloaded (each is deleted once read). */
export const removeExportFolder = () => rm(files, { recursive: true, force: true });

const deptName = (d: Dept) => (d === null ? 'null' : d);
const surveyName = (s: MSurvey) => `s${s.index}`;

interface Answered {
  status: number;
  data: unknown;
  error: { error?: { code?: string; message?: string } } | undefined;
}

/** The status and body of an openapi-fetch call (never throws for an error answer). */
async function answered(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<Answered> {
  const { data, error, response } = await call;
  return {
    status: response.status,
    data: (data as { data?: unknown } | undefined)?.data,
    error: error as Answered['error'],
  };
}

function expectStatus(result: Answered, status: number, code: string | undefined, what: string) {
  expect(
    { status: result.status, code: result.error?.error?.code },
    `${what}: ${result.error?.error?.message ?? ''}`,
  ).toEqual({ status, code });
}

// ---------------------------------------------------------------------------------------------------------------
// Selectors

const pick = <T>(items: readonly T[], selector: number): T | undefined =>
  items.length === 0 ? undefined : items[selector % items.length];
const surveyOf = (m: Readonly<Model>, selector: number) => pick(m.surveys, selector);

export const deptArb: fc.Arbitrary<Dept> = fc.oneof(
  { arbitrary: fc.constantFrom(...DEPARTMENTS), weight: 6 },
  { arbitrary: fc.constant(null), weight: 1 },
);

export const filterArb: fc.Arbitrary<DeptFilter> = fc.oneof(
  { arbitrary: fc.constantFrom(...DEPARTMENTS).map((value) => ({ operator: 'equals' as const, value })), weight: 4 },
  {
    arbitrary: fc
      .uniqueArray(fc.constantFrom(...DEPARTMENTS), { minLength: 1, maxLength: 2 })
      .map((value) => ({ operator: 'in' as const, value })),
    weight: 2,
  },
  { arbitrary: fc.boolean().map((value) => ({ operator: 'exists' as const, value })), weight: 1 },
  { arbitrary: fc.constantFrom('s', 'E', 'p').map((value) => ({ operator: 'contains' as const, value })), weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom('gte' as const, 'lte' as const), fc.constantFrom(...DEPARTMENTS))
      .map(([operator, value]) => ({ operator, value })),
    weight: 1,
  },
);

/** A matrix answer: each row unanswered (absent), a value, or N/A; null when no row is answered. */
function matrixArb<T>(
  rows: readonly { id: string }[],
  value: fc.Arbitrary<T>,
): fc.Arbitrary<Record<string, T | 'na'> | null> {
  const cell = fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 6, arbitrary: value },
    { weight: 1, arbitrary: fc.constant('na' as const) },
  );
  return fc.tuple(...rows.map(() => cell)).map((cells) => {
    const answered = rows.flatMap((row, i) => (cells[i] === undefined ? [] : [[row.id, cells[i]!] as const]));
    return answered.length === 0 ? null : Object.fromEntries(answered);
  });
}

const DAY = 86_400_000;
/** A date from `from` to `to` (ISO dates). */
const dateArb = (from: string, to: string) =>
  fc
    .integer({ min: Date.parse(from) / DAY, max: Date.parse(to) / DAY })
    .map((day) => new Date(day * DAY).toISOString().slice(0, 10));

/** "Other" texts: a comma, quotes, a line break, and one a spreadsheet would evaluate. */
const OTHER_TEXTS = ['Coworking space', 'Café, sometimes', 'The "hub"', 'On the road\nmostly', '=Hot desk'];

const answerArb = fc
  .record({
    nps: fc.option(fc.integer({ min: 0, max: 10 }), { freq: 6 }),
    rating: fc.option(
      fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) },
        { weight: 1, arbitrary: fc.constant('na' as const) },
      ),
      { freq: 4 },
    ),
    grid: fc.option(matrixArb(GRID_ROWS, fc.integer({ min: GRID_MIN, max: GRID_MAX })), { freq: 3, nil: null }),
    often: fc.option(matrixArb(OFTEN_ROWS, fc.constantFrom(...OFTEN_COLUMNS.map((c) => c.id))), { freq: 3, nil: null }),
    rank: fc.option(
      fc.shuffledSubarray(
        RANK_CHOICES.map((c) => c.id),
        { minLength: RANK_CHOICES.length, maxLength: RANK_CHOICES.length },
      ),
      { freq: 3 },
    ),
    // Multiples of ½ (some repeated, for ties and equal medians).
    hours: fc.option(
      fc.oneof(
        fc.constantFrom(0, 0.5, 7.5, 10, 40),
        fc.integer({ min: 0, max: 160 }).map((halves) => halves / 2),
      ),
      { freq: 3 },
    ),
    // Mostly within ten calendar years (monthly bins), sometimes further back (yearly bins).
    started: fc.option(
      fc.oneof(
        { weight: 4, arbitrary: dateArb('2019-01-01', DATE_MAX) },
        { weight: 1, arbitrary: dateArb(DATE_MIN, '2018-12-31') },
      ),
      { freq: 3 },
    ),
    where: fc.option(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...WHERE_CHOICES.map((c) => c.id)).map((id) => ({ id, other: null })) },
        { weight: 1, arbitrary: fc.constantFrom(...OTHER_TEXTS).map((other) => ({ id: 'other', other })) },
      ),
      { freq: 3 },
    ),
  })
  .map(({ where, ...rest }): ModelAnswer => ({ ...rest, where: where?.id ?? null, other: where?.other ?? null }))
  .filter((a) => answersOf(a).length > 0);

const cellsText = (cells: Record<string, unknown> | null) =>
  cells === null
    ? '-'
    : Object.entries(cells)
        .map(([row, v]) => `${row}:${String(v)}`)
        .join(',');
const answerText = (a: ModelAnswer) =>
  `nps=${a.nps ?? '-'} rating=${a.rating ?? '-'} grid=${cellsText(a.grid)} often=${cellsText(a.often)} rank=${a.rank?.join('>') ?? '-'} hours=${a.hours ?? '-'} started=${a.started ?? '-'} where=${a.where ?? '-'}${a.other === null ? '' : `(${JSON.stringify(a.other)})`}`;

/** The answer page's form fields of an answer (a matrix row `q.row`, a place `q.1`…, "Other"'s text `q.other`). */
function formOf(a: ModelAnswer): URLSearchParams {
  const form = new URLSearchParams();
  if (a.nps !== null) form.append('nps', String(a.nps));
  if (a.rating !== null) form.append('rating', String(a.rating));
  for (const id of ['grid', 'often'] as const)
    for (const [row, v] of Object.entries(a[id] ?? {})) form.append(`${id}.${row}`, String(v));
  a.rank?.forEach((choice, k) => form.append(`rank.${k + 1}`, choice));
  if (a.hours !== null) form.append('hours', String(a.hours));
  if (a.started !== null) form.append('started', a.started);
  if (a.where !== null) form.append('where', a.where);
  if (a.other !== null) form.append('where.other', a.other);
  return form;
}

// ---------------------------------------------------------------------------------------------------------------
// Surveys

export async function createSurvey(
  m: Model,
  r: Real,
  settings: { allowMultiple: boolean; anonymous: boolean },
  launch: boolean,
): Promise<MSurvey> {
  const created = await answered(
    r.client.POST('/api/v1/surveys', {
      body: {
        title: `Pulse ${m.surveys.length}`,
        questions: QUESTIONS.map((q) => ({ ...q })),
        // The defaults (one response each, not anonymous) by leaving settings out.
        ...(settings.allowMultiple || settings.anonymous
          ? { settings: { allowMultipleResponses: settings.allowMultiple, anonymous: settings.anonymous } }
          : {}),
      },
    }),
  );
  expectStatus(created, 201, undefined, 'create survey');
  const data = created.data as {
    id: string;
    status: string;
    settings: { privacy: string; allowMultipleResponses: boolean; anonymous: boolean };
  };
  expect(data.status).toBe('draft');
  expect(data.settings).toEqual({
    privacy: settings.anonymous ? 'anonymous' : 'identified',
    allowMultipleResponses: settings.allowMultiple,
    anonymous: settings.anonymous,
  });
  const survey: MSurvey = {
    index: m.surveys.length,
    id: data.id,
    status: 'draft',
    allowMultiple: settings.allowMultiple,
    anonymous: settings.anonymous,
    distributions: [],
    exports: [],
  };
  m.surveys.push(survey);
  if (launch) await transition(m, r, survey, 'launch');
  return survey;
}

export class CreateSurvey implements Cmd {
  constructor(
    readonly allowMultiple: boolean,
    readonly anonymous: boolean,
    readonly launch: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.surveys.length < 3;
  async run(m: Model, r: Real) {
    await createSurvey(m, r, this, this.launch);
  }
  toString = () =>
    `CreateSurvey(${this.allowMultiple ? 'multiple' : 'once'}${this.anonymous ? ', anonymous' : ''}${this.launch ? ', launched' : ''})`;
}

type Transition = 'launch' | 'pause' | 'close';
const allowedFrom: Record<Transition, MSurvey['status'][]> = {
  launch: ['draft', 'paused'],
  pause: ['active'],
  close: ['active', 'paused'],
};
const resulting: Record<Transition, MSurvey['status']> = { launch: 'active', pause: 'paused', close: 'closed' };

async function transition(m: Model, r: Real, survey: MSurvey, kind: Transition) {
  const result = await answered(r.client.POST(`/api/v1/surveys/{id}/${kind}`, { params: { path: { id: survey.id } } }));
  if (!allowedFrom[kind].includes(survey.status)) {
    expectStatus(result, 409, 'invalid_state', `${kind} of a ${survey.status} survey`);
    return;
  }
  expectStatus(result, 200, undefined, `${kind} of a ${survey.status} survey`);
  survey.status = resulting[kind];
  const data = result.data as { status: string; responseCount: number };
  expect(data.status).toBe(survey.status);
  expect(data.responseCount, 'survey responseCount').toBe(live(m, survey).length);
}

export class Transit implements Cmd {
  constructor(
    readonly survey: number,
    readonly kind: Transition,
  ) {}
  check = (m: Readonly<Model>) => m.surveys.length > 0;
  async run(m: Model, r: Real) {
    await transition(m, r, surveyOf(m, this.survey)!, this.kind);
  }
  toString = () => `${this.kind[0]!.toUpperCase()}${this.kind.slice(1)}(#${this.survey})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Submissions

type Who = { kind: 'person'; index: number } | { kind: 'stranger'; index: number } | { kind: 'nobody' };
const whoArb: fc.Arbitrary<Who> = fc.oneof(
  { arbitrary: fc.nat({ max: 11 }).map((index) => ({ kind: 'person' as const, index })), weight: 10 },
  { arbitrary: fc.nat({ max: 1 }).map((index) => ({ kind: 'stranger' as const, index })), weight: 1 },
  { arbitrary: fc.constant({ kind: 'nobody' as const }), weight: 1 },
);
const whoId = (who: Who) =>
  who.kind === 'person' ? personId(who.index) : who.kind === 'stranger' ? strangerId(who.index) : null;

const hasLiveResponse = (m: Model, survey: MSurvey, respondent: string) =>
  live(m, survey).some((x) => x.respondent === respondent);

async function submitApi(m: Model, r: Real, survey: MSurvey, who: Who, answer: ModelAnswer) {
  const sent = whoId(who);
  const result = await answered(
    r.client.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: survey.id } },
      body: { ...(sent === null ? {} : { respondentExternalId: sent }), answers: answersOf(answer) },
    }),
  );
  if (survey.status !== 'active')
    return expectStatus(result, 409, 'invalid_state', `API answer to a ${survey.status} survey`);
  const respondent = survey.anonymous ? null : sent;
  if (!survey.allowMultiple && respondent !== null && hasLiveResponse(m, survey, respondent)) {
    return expectStatus(result, 409, 'duplicate_response', `second API answer of ${respondent}`);
  }
  expectStatus(result, 201, undefined, 'API answer');
  const reached = respondent === null ? undefined : latestReaching(survey, respondent);
  const person = m.people.find((p) => p.externalId === respondent);
  const stored = result.data as {
    id: string;
    respondentExternalId: string | null;
    distributionId: string | null;
    answers: unknown;
    submittedAt: string;
  };
  expect(
    {
      respondentExternalId: stored.respondentExternalId,
      distributionId: stored.distributionId,
      answers: stored.answers,
    },
    `the stored API answer of ${respondent ?? 'nobody'} (the distribution it answers: the latest that reached them)`,
  ).toEqual({
    respondentExternalId: respondent,
    distributionId: reached?.distribution.id ?? null,
    answers: answersOf(answer),
  });
  const subject = reached
    ? { department: reached.recipient.department }
    : person?.record
      ? { department: person.record.department }
      : null;
  saw(
    `API answer: ${reached ? 'answers a distribution' : respondent === null ? 'no respondent' : person?.record ? 'by the record' : 'unknown respondent'}`,
  );
  if (reached && (person?.record ?? null)?.department !== reached.recipient.department)
    saw('API answer: snapshot differs from the record');
  if (reached) reached.recipient.status = 'responded';
  m.responses.push({
    id: stored.id,
    survey,
    respondent,
    ...answer,
    distributionId: stored.distributionId,
    subject,
    submittedAt: stored.submittedAt,
    channel: 'api',
    acked: tick(m),
    deleted: null,
    forgotten: null,
  });
  if (respondent !== null) m.events.push({ responseId: stored.id, respondent });
  r.log.push(
    `  ${stored.id} = API answer of ${respondent ?? 'nobody'} to ${surveyName(survey)}, distribution ${reached ? `d${reached.distribution.index}` : 'none'}, subject ${subject ? deptName(subject.department) : 'none'}`,
  );
}

export class SubmitApi implements Cmd {
  constructor(
    readonly survey: number,
    readonly answers: { who: Who; answer: ModelAnswer }[],
  ) {}
  check = (m: Readonly<Model>) => m.surveys.length > 0;
  async run(m: Model, r: Real) {
    const survey = surveyOf(m, this.survey)!;
    for (const { who, answer } of this.answers) await submitApi(m, r, survey, who, answer);
  }
  toString = () =>
    `SubmitApi(#${this.survey}, ${this.answers.map(({ who, answer }) => `${whoId(who) ?? 'nobody'} ${answerText(answer)}`).join('; ')})`;
}

/** Every response of a survey as the API lists it. */
async function listed(r: Real, survey: MSurvey) {
  const all: {
    id: string;
    respondentExternalId: string | null;
    distributionId?: string | null;
    answers: unknown;
    submittedAt: string;
  }[] = [];
  for await (const x of r.client.paginate('/api/v1/surveys/{id}/responses', {
    params: { path: { id: survey.id }, query: { pageSize: 100 } },
  }))
    all.push(x);
  return all;
}

async function submitLink(m: Model, r: Real, distribution: MDistribution, recipient: MRecipient, answer: ModelAnswer) {
  const survey = distribution.survey;
  const page = await fetch(recipient.link, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: formOf(answer).toString(),
    redirect: 'manual',
  });
  const html = await page.text();
  const respondent = survey.anonymous ? null : recipient.externalId;
  let expected: number;
  if (recipient.status === 'responded') expected = 410;
  else if (survey.status !== 'active') expected = 409;
  else if (!survey.allowMultiple && respondent !== null && hasLiveResponse(m, survey, respondent)) expected = 410;
  else expected = 200;
  const known = new Set(m.responses.filter((x) => x.survey === survey).map((x) => x.id));
  const fresh = (await listed(r, survey)).filter((x) => !known.has(x.id));
  expect(
    { status: page.status, stored: fresh.length },
    `answer page of ${recipient.externalId} (d${distribution.index}, recipient ${recipient.status}) on a ${survey.status} survey: ${html
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .slice(0, 300)}`,
  ).toEqual({ status: expected, stored: expected === 200 ? 1 : 0 });
  saw(
    `answer page: ${expected}${expected === 410 && recipient.status !== 'responded' ? ' (answered through the API before)' : ''}`,
  );
  if (expected !== 200) return;
  const stored = fresh[0]!;
  expect(
    {
      respondentExternalId: stored.respondentExternalId,
      distributionId: stored.distributionId,
      answers: stored.answers,
    },
    'the stored answer-page response',
  ).toEqual({
    respondentExternalId: respondent,
    distributionId: distribution.id,
    answers: answersOf(answer),
  });
  recipient.status = 'responded';
  if (survey.anonymous) {
    // An anonymous survey's responses carry no identity: nothing the API shows may tie this response to its person.
    const recipients: { respondentExternalId: string; respondedAt: string | null }[] = [];
    for await (const x of r.client.paginate('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
      params: { path: { surveyId: survey.id, distributionId: distribution.id } },
    } as never)) {
      recipients.push(x as (typeof recipients)[number]);
    }
    const telling = recipients.filter((x) => x.respondedAt === stored.submittedAt);
    if (telling.length > 0) {
      found(
        'anonymous-responded-at',
        `anonymous response ${stored.id} (submittedAt ${stored.submittedAt}) and recipient ${telling.map((x) => x.respondentExternalId).join(', ')} of d${distribution.index} (respondedAt ${telling[0]!.respondedAt})`,
      );
    }
    // (The contract says more since be69bdd: an anonymous survey's recipients never show a `respondedAt`.)
    expect(
      recipients.map((x) => x.respondedAt).filter((x) => x !== null),
      `respondedAt of d${distribution.index}'s recipients, in an anonymous survey`,
    ).toEqual([]);
  }
  // The snapshot of the distribution holds the respondent named by the response (none in an anonymous survey).
  const subject = respondent === null ? null : { department: recipient.department };
  m.responses.push({
    id: stored.id,
    survey,
    respondent,
    ...answer,
    distributionId: distribution.id,
    subject,
    submittedAt: stored.submittedAt,
    channel: 'link',
    acked: tick(m),
    deleted: null,
    forgotten: null,
  });
  if (respondent !== null) m.events.push({ responseId: stored.id, respondent });
  r.log.push(
    `  ${stored.id} = link answer of ${recipient.externalId} to ${surveyName(survey)} via d${distribution.index}, subject ${subject ? deptName(subject.department) : 'none'}`,
  );
}

export class SubmitLink implements Cmd {
  constructor(
    /** Picks a distribution (of any survey), then recipients of it. */
    readonly distribution: number,
    readonly answers: { recipient: number; answer: ModelAnswer }[],
  ) {}
  check = (m: Readonly<Model>) => m.surveys.some((s) => s.distributions.some((d) => d.recipients.size > 0));
  async run(m: Model, r: Real) {
    const distribution = pick(
      m.surveys.flatMap((s) => s.distributions.filter((d) => d.recipients.size > 0)),
      this.distribution,
    )!;
    const recipients = [...distribution.recipients.values()];
    for (const { recipient, answer } of this.answers)
      await submitLink(m, r, distribution, pick(recipients, recipient)!, answer);
  }
  toString = () =>
    `SubmitLink(#${this.distribution}, ${this.answers.map((a) => `#${a.recipient} ${answerText(a.answer)}`).join('; ')})`;
}

export class DeleteResponse implements Cmd {
  constructor(readonly response: number) {}
  check = (m: Readonly<Model>) => m.responses.some((x) => x.deleted === null);
  async run(m: Model, r: Real) {
    const target = pick(
      m.responses.filter((x) => x.deleted === null),
      this.response,
    )!;
    const result = await answered(
      r.client.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
        params: { path: { id: target.survey.id, responseId: target.id } },
      }),
    );
    expect(result.status, `delete response ${target.id}`).toBeLessThan(300);
    target.deleted = tick(m);
    r.log.push(`  deleted ${target.id}`);
  }
  toString = () => `DeleteResponse(#${this.response})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Respondents

export async function putRespondent(m: Model, r: Real, index: number, department: Dept) {
  const person = m.people[index]!;
  const result = await answered(
    r.client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: person.externalId } },
      body: { email: person.email, department },
    }),
  );
  expectStatus(result, person.record ? 200 : 201, undefined, `PUT ${person.externalId}`);
  expect((result.data as { department: Dept }).department).toBe(department);
  person.record = { department };
}

export class PutRespondent implements Cmd {
  constructor(
    readonly person: number,
    readonly department: Dept,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await putRespondent(m, r, this.person, this.department);
  }
  toString = () => `PutRespondent(${personId(this.person)}, ${deptName(this.department)})`;
}

export class DeleteRespondent implements Cmd {
  constructor(readonly person: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const person = m.people[this.person]!;
    const result = await answered(
      r.client.DELETE('/api/v1/respondents/{externalId}', { params: { path: { externalId: person.externalId } } }),
    );
    if (person.record === null) return expectStatus(result, 404, 'not_found', `DELETE of absent ${person.externalId}`);
    expect(result.status, `DELETE ${person.externalId}`).toBeLessThan(300);
    person.record = null;
  }
  toString = () => `DeleteRespondent(${personId(this.person)})`;
}

export class SyncRespondents implements Cmd {
  constructor(readonly changes: { person: number; department: Dept }[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const records = this.changes.map((c) => ({
      externalId: personId(c.person),
      email: m.people[c.person]!.email,
      department: c.department,
    }));
    const accepted = await answered(
      r.client.POST('/api/v1/respondents/sync', { body: { mode: 'upsert', respondents: records } }),
    );
    expectStatus(accepted, 202, undefined, 'sync');
    const job = await r.client.respondents.waitForSync((accepted.data as { jobId: string }).jobId, pollFast);
    // The last occurrence of an id wins; earlier ones are skipped. Unchanged records are skipped too.
    const last = new Map<number, Dept>();
    for (const c of this.changes) last.set(c.person, c.department);
    let created = 0;
    let updated = 0;
    let skipped = this.changes.length - last.size;
    for (const [index, department] of last) {
      const person = m.people[index]!;
      if (person.record === null) created++;
      else if (person.record.department === department) skipped++;
      else updated++;
      person.record = { department };
    }
    expect({ status: job.status, ...job.stats }, 'sync job').toEqual({
      status: 'completed',
      totalRecords: this.changes.length,
      created,
      updated,
      skipped,
      errors: 0,
      deleted: 0,
    });
  }
  toString = () =>
    `SyncRespondents(${this.changes.map((c) => `${personId(c.person)}→${deptName(c.department)}`).join(', ')})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Distributions

const linkIn = (text: string) => /https?:\/\/[^\s<>"]+\/s\/[A-Za-z0-9_-]+/.exec(text)?.[0];

export class Distribute implements Cmd {
  constructor(
    readonly survey: number,
    readonly method: 'link' | 'email',
    readonly filter: DeptFilter | null,
  ) {}
  check = (m: Readonly<Model>) => m.surveys.length > 0;
  async run(m: Model, r: Real) {
    const survey = surveyOf(m, this.survey)!;
    const before = new Map(m.people.map((p) => [p.email.toLowerCase(), r.smtp.counts.get(p.email.toLowerCase()) ?? 0]));
    const result = await answered(
      r.client.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId: survey.id } },
        body: {
          targeting: { filters: this.filter ? [{ field: 'department', ...this.filter }] : [] },
          distribution: { method: this.method },
        },
      }),
    );
    if (survey.status !== 'active')
      return expectStatus(result, 409, 'invalid_state', `distribution of a ${survey.status} survey`);
    expectStatus(result, 202, undefined, 'distribute');
    const id = (result.data as { id: string }).id;
    const done = await r.client.distributions.wait(survey.id, id, pollFast);
    const audience = m.people.filter(
      (p) => p.record !== null && (this.filter === null || matches(this.filter, p.record.department)),
    );
    const bounced = this.method === 'email' ? audience.filter((p) => p.externalId === personId(BOUNCING_PERSON)) : [];
    expect(
      {
        status: done.status,
        matchedCount: done.matchedCount,
        sentCount: done.sentCount,
        failedCount: done.failedCount,
      },
      'distribution',
    ).toEqual({
      status: 'sent',
      matchedCount: audience.length,
      sentCount: audience.length - bounced.length,
      failedCount: bounced.length,
    });
    const listedRecipients: {
      respondentExternalId: string;
      status: string;
      link: string;
      snapshot: { department: Dept };
    }[] = [];
    for await (const x of r.client.paginate('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
      params: { path: { surveyId: survey.id, distributionId: id } },
    } as never)) {
      listedRecipients.push(x as (typeof listedRecipients)[number]);
    }
    const reachedAt = tick(m);
    const distribution: MDistribution = {
      index: survey.distributions.length,
      id,
      survey,
      method: this.method,
      recipients: new Map(),
    };
    for (const p of audience) {
      const bounce = bounced.includes(p);
      distribution.recipients.set(p.externalId, {
        externalId: p.externalId,
        email: p.email,
        department: p.record!.department,
        status: bounce ? 'bounced' : 'sent',
        reachedAt: bounce ? null : reachedAt,
        link: '',
      });
    }
    expect(
      listedRecipients
        .map((x) => ({ id: x.respondentExternalId, status: x.status, department: x.snapshot.department }))
        .sort((a, b) => (a.id < b.id ? -1 : 1)),
      'recipients and their snapshots',
    ).toEqual(
      [...distribution.recipients.values()].map((x) => ({
        id: x.externalId,
        status: x.status,
        department: x.department,
      })),
    );
    for (const x of listedRecipients) distribution.recipients.get(x.respondentExternalId)!.link = x.link;
    if (this.method === 'email') {
      // Each person reached got one message, and its link is the recipient's: answers go through the mailed link.
      await r.smtp.settled();
      for (const recipient of distribution.recipients.values()) {
        const address = recipient.email.toLowerCase();
        if (recipient.status === 'bounced') continue;
        expect((r.smtp.counts.get(address) ?? 0) - before.get(address)!, `messages to ${address}`).toBe(1);
        const mail = r.smtp.received.filter((x) => x.envelopeTo.includes(address)).at(-1);
        expect(mail && linkIn(mail.text), `link mailed to ${recipient.externalId}`).toBe(recipient.link);
      }
    }
    survey.distributions.push(distribution);
    r.log.push(
      `  d${distribution.index} = ${id} (${surveyName(survey)}, ${this.method}): ${[...distribution.recipients.values()].map((x) => `${x.externalId}:${deptName(x.department)}${x.status === 'bounced' ? '(bounced)' : ''}`).join(' ')}`,
    );
  }
  toString = () =>
    `Distribute(#${this.survey}, ${this.method}${this.filter ? `, ${describeFilter(this.filter)}` : ''})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Exports

async function runExport(m: Model, r: Real, survey: MSurvey, format: Format, base: MExport | null) {
  const at = tick(m);
  const file = path.join(files, `${survey.id}-${at}-${Math.random().toString(36).slice(2)}.${format}`);
  const done = await exportResponsesToFile(
    r.client,
    survey.id,
    { format, ...(base ? { sinceExport: base.id } : {}) },
    file,
    pollFast,
  );
  const text = await readFile(file, 'utf8');
  await rm(file, { force: true });
  const deletions: string[] = [];
  for await (const d of r.client.paginate('/api/v1/exports/{exportId}/deletions', {
    params: { path: { exportId: done.id }, query: { pageSize: 100 } },
  }))
    deletions.push(d.responseId);
  const expected = expectedExport(m, survey, at, base);
  const what = base ? `increment of ${surveyName(survey)} since ${base.id}` : `full export of ${surveyName(survey)}`;
  if (format === 'csv') {
    expect(await parseCsv(text), `${what}: its CSV rows (${done.id})`).toEqual(expected.csv);
  } else {
    const records: unknown[] =
      format === 'json'
        ? JSON.parse(text)
        : text
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line));
    expect(records, `${what}: its records (${done.id})`).toEqual(expected.records);
  }
  expect(done.rowCount, `${what}: rowCount`).toBe(expected.records.length);
  expect(deletions.sort(), `${what}: its deletions list (${done.id})`).toEqual(expected.deletions);
  saw(
    `export: ${base ? 'increment' : 'full'}${expected.records.length > 0 ? ' with records' : ' empty'}${expected.deletions.length > 0 ? ' and deletions' : ''}`,
  );
  if (expected.records.length > 0) saw(`export: ${format} with records`);
  const deletedGrids = m.responses.filter(
    (x) => expected.deletions.includes(x.id) && (x.grid !== null || x.often !== null || x.rank !== null),
  );
  if (base && deletedGrids.length > 0) saw('export: increment lists a deleted matrix or ranking answer');
  survey.exports.push({ id: done.id, at, base, erased: false });
  r.log.push(`  ${done.id} = ${format} ${what}: ${expected.records.length} records, ${deletions.length} deletions`);
}

type Format = 'json' | 'ndjson' | 'csv';

export class ExportFull implements Cmd {
  constructor(
    readonly survey: number,
    readonly format: Format,
  ) {}
  check = (m: Readonly<Model>) => m.surveys.length > 0;
  async run(m: Model, r: Real) {
    await runExport(m, r, surveyOf(m, this.survey)!, this.format, null);
  }
  toString = () => `ExportFull(#${this.survey}, ${this.format})`;
}

export class ExportIncrement implements Cmd {
  constructor(
    readonly survey: number,
    /** null: continue the latest export of the survey; else any earlier one. */
    readonly base: number | null,
    readonly format: Format,
  ) {}
  check = (m: Readonly<Model>) => m.surveys.some((s) => s.exports.length > 0);
  async run(m: Model, r: Real) {
    const survey = pick(
      m.surveys.filter((s) => s.exports.length > 0),
      this.survey,
    )!;
    const base = this.base === null ? survey.exports.at(-1)! : pick(survey.exports, this.base)!;
    await runExport(m, r, survey, this.format, base);
  }
  toString = () =>
    `ExportIncrement(#${this.survey}, ${this.base === null ? 'latest' : `#${this.base}`}, ${this.format})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Analytics

/**
 * `noop`: a window before every run (the same responses, read by a scan instead of the exact counts); `cut`: from
 * and/or to the `submittedAt` of responses of the survey (picked by index), so one bound falls on a response.
 */
type Window = { kind: 'noop' } | { kind: 'cut'; after: number | null; before: number | null };
type View = { segment: boolean; distribution: number | null; filter: DeptFilter | null; window: Window | null };

/** Before every run, not at midnight: the same responses, read by a scan instead of the exact counts. */
export const NO_OP_WINDOW = '2020-01-01T00:00:01Z';

function queryString(q: StaticQuery) {
  return {
    ...(q.submittedAfter ? { submittedAfter: q.submittedAfter } : {}),
    ...(q.submittedBefore ? { submittedBefore: q.submittedBefore } : {}),
    ...(q.segmentBy ? { segmentBy: q.segmentBy } : {}),
    ...(q.distributionId ? { distributionId: q.distributionId } : {}),
    ...(q.filter ? { filters: JSON.stringify({ filters: [{ field: 'department', ...q.filter }] }) } : {}),
  };
}

export async function compareStatic(m: Model, r: Real, survey: MSurvey, q: StaticQuery) {
  // The model is of the data path's figures, compared after every change however small, which the audit of
  // released results rightly withholds; each comparison asks as of a survey that has released nothing (the audit
  // has tests of its own).
  await forgetReleases(r.t, survey.id);
  const result = await answered(
    r.client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: survey.id }, query: queryString(q) },
    }),
  );
  expectStatus(result, 200, undefined, 'static analytics');
  const { generatedAt: _, ...actual } = result.data as Record<string, unknown>;
  const expected = expectedStatic(m, survey, q);
  const what = `static analytics of ${surveyName(survey)} ${JSON.stringify(queryString(q))} (groups as asked: ${groupSizes(m, survey, q)}; threshold ${m.threshold})`;
  const e = expected as { suppressed: boolean; segments: { suppressed: boolean; value: Dept }[] };
  if (e.suppressed) saw('analytics: whole suppressed');
  else {
    saw(
      `analytics: shown${q.submittedAfter === NO_OP_WINDOW ? ', no-op window' : q.submittedAfter || q.submittedBefore ? ', window' : ''}${q.segmentBy ? ', by department' : ''}${q.distributionId ? ', one distribution' : ''}${q.filter ? ', filtered' : ''}`,
    );
    const guard = guardDetails(m, survey, q);
    if (guard.underThreshold) saw('analytics: a group under the threshold');
    if (guard.guarded) saw('analytics: subtraction guard hid a group');
    if (guard.tie) saw('analytics: subtraction guard chose between equally small groups');
    if (e.segments.some((g) => g.value === null)) saw('analytics: null group present');
    const scope = scopeOf(m, survey, q);
    const cells = scope.flatMap((x) => [...Object.values(x.grid ?? {}), ...Object.values(x.often ?? {})]);
    if (cells.includes('na')) saw('analytics: shown, a matrix row N/A');
    if (
      scope.some(
        (x) =>
          (x.grid && Object.keys(x.grid).length < GRID_ROWS.length) ||
          (x.often && Object.keys(x.often).length < OFTEN_ROWS.length),
      )
    )
      saw('analytics: shown, a matrix row unanswered');
    if (scope.some((x) => x.rank !== null)) saw('analytics: shown, a ranking');
    if (scope.some((x) => x.where === 'other')) saw('analytics: shown, an "Other" answer');
    if (m.responses.some((x) => x.survey === survey && x.deleted !== null && (x.grid || x.often || x.rank)))
      saw('analytics: shown after a matrix or ranking answer was deleted');
  }
  if (!isDeepStrictEqual(actual, expected)) {
    if (isDeepStrictEqual(actual, expectedStatic(m, survey, q, { split: true }))) {
      const erased = scopeOf(m, survey, q).filter((x) => x.forgotten !== null);
      foundOpen(
        'erased-respondents',
        `${what}: the server counts each of ${erased.map((x) => `${x.id} (${pseudonymOf(x)})`).join(', ')} as a respondent of its own`,
        r.log,
      );
      return;
    }
    if (isDeepStrictEqual(actual, expectedStatic(m, survey, q, { halves: 'up' }))) {
      found(
        'negative-halves',
        `${what}: NPS score ${JSON.stringify((actual as { questions: { score?: number }[] }).questions[0]?.score)} where the model rounds half away from zero`,
      );
    }
    if (
      q.segmentBy &&
      tieOrders(m, survey, q).some((tieOrder) => isDeepStrictEqual(actual, expectedStatic(m, survey, q, { tieOrder })))
    ) {
      const shown = (x: unknown) =>
        (x as { segments: { value: Dept; suppressed: boolean }[] }).segments
          .filter((g) => !g.suppressed)
          .map((g) => deptName(g.value));
      found(
        'tie-order',
        `${what}: the server shows ${shown(actual).join(', ')}, the model ${shown(expected).join(', ')}`,
      );
    }
  }
  expect(actual, what).toEqual(expected);
}

/**
 * A distribution's recipients: who, their snapshot, and who responded (with a time, unless the survey is anonymous).
 */
async function compareRecipients(r: Real, distribution: MDistribution) {
  const listed: {
    respondentExternalId: string;
    status: string;
    respondedAt: string | null;
    snapshot: { department: Dept };
  }[] = [];
  for await (const x of r.client.paginate('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
    params: { path: { surveyId: distribution.survey.id, distributionId: distribution.id } },
  } as never)) {
    listed.push(x as (typeof listed)[number]);
  }
  const anonymous = distribution.survey.anonymous;
  expect(
    listed
      .map((x) => ({
        id: x.respondentExternalId,
        status: x.status,
        department: x.snapshot.department,
        respondedAt: x.respondedAt !== null,
      }))
      .sort((a, b) => (a.id < b.id ? -1 : 1)),
    `recipients of d${distribution.index} (${distribution.id})`,
  ).toEqual(
    [...distribution.recipients.values()].map((x) => ({
      id: x.externalId,
      status: x.status,
      department: x.department,
      respondedAt: x.status === 'responded' && !anonymous,
    })),
  );
}

/** Every order of the groups of a breakdown, as orders for the guard's ties. */
function tieOrders(m: Model, survey: MSurvey, q: StaticQuery): ((a: Dept, b: Dept) => number)[] {
  const values = [...new Set(scopeOf(m, survey, q).map((x) => x.subject?.department ?? null))];
  const permutations = (xs: Dept[]): Dept[][] =>
    xs.length <= 1
      ? [xs]
      : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
  return permutations(values).map((order) => (a: Dept, b: Dept) => order.indexOf(a) - order.indexOf(b));
}

/** Whether the breakdown of `q` has a group under the threshold, one hidden by the guard, a tie for the guard. */
function guardDetails(m: Model, survey: MSurvey, q: StaticQuery) {
  if (!q.segmentBy) return { underThreshold: false, guarded: false, tie: false };
  const byGroup = new Map<Dept, MResponse[]>();
  for (const x of scopeOf(m, survey, q))
    byGroup.set(x.subject?.department ?? null, [...(byGroup.get(x.subject?.department ?? null) ?? []), x]);
  const groups = [...byGroup].map(([value, rs]) => ({ value, respondents: respondentsOf(rs) }));
  const under = groups.filter((g) => g.respondents < m.threshold);
  const hidden = suppressedValues(groups, m.threshold);
  const guarded = hidden.size > under.length;
  // A tie: the last group the guard hid has the size of a group it left shown.
  const guardedGroups = groups.filter((g) => hidden.has(g.value) && g.respondents >= m.threshold);
  const tie = guardedGroups.some((g) => groups.some((o) => !hidden.has(o.value) && o.respondents === g.respondents));
  return { underThreshold: under.length > 0, guarded, tie };
}

function windowOf(
  m: Model,
  survey: MSurvey,
  window: Window | null,
): Pick<StaticQuery, 'submittedAfter' | 'submittedBefore'> {
  if (window === null) return {};
  if (window.kind === 'noop') return { submittedAfter: NO_OP_WINDOW };
  const times = [...new Set(live(m, survey).map((x) => x.submittedAt))].sort();
  if (times.length === 0) return { submittedAfter: NO_OP_WINDOW };
  const after = window.after === null ? undefined : pick(times, window.after);
  const before = window.before === null ? undefined : pick(times, window.before);
  // A window must end after it starts: an empty one becomes a window from that time on.
  if (after !== undefined && before !== undefined && before <= after) return { submittedAfter: after };
  return { ...(after ? { submittedAfter: after } : {}), ...(before ? { submittedBefore: before } : {}) };
}

export class ReadAnalytics implements Cmd {
  constructor(
    readonly survey: number,
    readonly view: View,
  ) {}
  check = (m: Readonly<Model>) => m.surveys.length > 0;
  async run(m: Model, r: Real) {
    const survey = surveyOf(m, this.survey)!;
    await compareStatic(m, r, survey, {});
    await compareStatic(m, r, survey, { segmentBy: 'department' });
    const distribution =
      this.view.distribution === null ? undefined : pick(survey.distributions, this.view.distribution);
    // Every answer to a distribution, by its id (as long as the survey has one).
    const latest = survey.distributions.at(-1);
    if (latest) {
      await compareStatic(m, r, survey, { distributionId: (distribution ?? latest).id });
      await compareRecipients(r, distribution ?? latest);
    }
    if (this.view.filter === null && !this.view.window && !(this.view.segment && distribution)) return;
    await compareStatic(m, r, survey, {
      ...windowOf(m, survey, this.view.window),
      ...(this.view.segment ? { segmentBy: 'department' } : {}),
      ...(distribution ? { distributionId: distribution.id } : {}),
      ...(this.view.filter ? { filter: this.view.filter } : {}),
    });
  }
  toString = () =>
    `ReadAnalytics(#${this.survey}${this.view.segment ? ', by department' : ''}${this.view.distribution === null ? '' : `, distribution #${this.view.distribution}`}${this.view.filter ? `, ${describeFilter(this.view.filter)}` : ''}${this.view.window === null ? '' : this.view.window.kind === 'noop' ? ', no-op window' : `, window #${this.view.window.after ?? '-'}…#${this.view.window.before ?? '-'}`})`;
}

export class SetThreshold implements Cmd {
  constructor(readonly threshold: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const result = await answered(
      r.client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: this.threshold } }),
    );
    if (this.threshold < 3 || this.threshold > 100)
      return expectStatus(result, 400, 'validation_failed', `threshold ${this.threshold}`);
    expectStatus(result, 200, undefined, 'threshold');
    expect((result.data as { anonymityThreshold: number }).anonymityThreshold).toBe(this.threshold);
    m.threshold = this.threshold;
  }
  toString = () => `SetThreshold(${this.threshold})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Privacy requests

/**
 * Whom a request names: someone who answered (a live response names them, or an invitation of theirs says they
 * responded; by their externalId, or a person by their address), someone whose invitation says they responded
 * (those to anonymous surveys first: their answers are not identifiable), the subject of a stored access file
 * (`flip`: the same person by their other identifier), a person by externalId or address (in capitals: addresses
 * compare without case), a stranger (an id that was never a respondent), or an address nobody has.
 */
export type PrivacyWho =
  | { by: 'responder'; index: number; email: boolean }
  | { by: 'invited'; index: number }
  | { by: 'accessed'; index: number; flip: boolean }
  | { by: 'person'; index: number; email: boolean; upper: boolean }
  | { by: 'stranger'; index: number }
  | { by: 'nobody' };

/** `accessed`: the weight of the subjects of access files (an erasure deletes their files). */
const privacyWhoArb = (accessed: number): fc.Arbitrary<PrivacyWho> =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(fc.nat({ max: 11 }), fc.boolean())
        .map(([index, email]) => ({ by: 'responder' as const, index, email })),
    },
    { weight: 1, arbitrary: fc.nat({ max: 11 }).map((index) => ({ by: 'invited' as const, index })) },
    {
      weight: accessed,
      arbitrary: fc
        .tuple(fc.nat({ max: 5 }), fc.boolean())
        .map(([index, flip]) => ({ by: 'accessed' as const, index, flip })),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.nat({ max: 11 }), fc.boolean(), fc.boolean())
        .map(([index, email, upper]) => ({ by: 'person' as const, index, email, upper })),
    },
    { weight: 1, arbitrary: fc.nat({ max: 1 }).map((index) => ({ by: 'stranger' as const, index })) },
    { weight: 1, arbitrary: fc.constant({ by: 'nobody' as const }) },
  );

const whoText = (w: PrivacyWho) =>
  w.by === 'responder'
    ? `responder #${w.index}${w.email ? ' by e-mail' : ''}`
    : w.by === 'invited'
      ? `invited #${w.index}`
      : w.by === 'accessed'
        ? `accessed #${w.index}${w.flip ? ' by the other identifier' : ''}`
        : w.by === 'person'
          ? `${personId(w.index)}${w.email ? ` by e-mail${w.upper ? ' in capitals' : ''}` : ''}`
          : w.by === 'stranger'
            ? strangerId(w.index)
            : 'an unknown address';

function subjectOf(m: Readonly<Model>, w: PrivacyWho): MSubject {
  const byId = (id: string, email: boolean, upper = false): MSubject => {
    const person = m.people.find((p) => p.externalId === id);
    if (!email || !person) return { kind: 'externalId', value: id };
    return { kind: 'email', value: upper ? person.email.toUpperCase() : person.email };
  };
  const responder = (index: number, email: boolean) => {
    const invited = m.surveys.flatMap((s) =>
      s.distributions.flatMap((d) => [...d.recipients.values()].filter((x) => x.status === 'responded')),
    );
    const responders = [
      ...new Set([
        ...m.responses.flatMap((x) => (x.deleted === null && x.respondent !== null ? [x.respondent] : [])),
        ...invited.map((x) => x.externalId),
      ]),
    ];
    return byId(pick(responders, index) ?? personId(0), email);
  };
  switch (w.by) {
    case 'responder':
      return responder(w.index, w.email);
    case 'invited': {
      const answered = (anonymous: boolean) =>
        m.surveys
          .filter((x) => x.anonymous === anonymous)
          .flatMap((x) => x.distributions.flatMap((d) => [...d.recipients.values()]))
          .filter((x) => x.status === 'responded')
          .map((x) => x.externalId);
      const invited = pick([...new Set([...answered(true), ...answered(false)])], w.index);
      return invited === undefined ? responder(w.index, false) : byId(invited, false);
    }
    case 'accessed': {
      const access = pick(
        m.accessFiles.filter((a) => !a.erased),
        w.index,
      );
      if (!access) return responder(w.index, w.flip);
      if (!w.flip) return access.subject;
      const person = m.people.find((p) =>
        access.subject.kind === 'externalId'
          ? p.externalId === access.subject.value
          : p.email.toLowerCase() === access.subject.value.toLowerCase(),
      );
      if (!person) return access.subject;
      return byId(person.externalId, access.subject.kind === 'externalId');
    }
    case 'person':
      return byId(personId(w.index), w.email, w.upper);
    case 'stranger':
      return { kind: 'externalId', value: strangerId(w.index) };
    case 'nobody':
      return { kind: 'email', value: `nobody.${m.tag}@example.com` };
  }
}

const subjectText = (s: MSubject) => `${s.kind} ${s.value}`;
const subjectBody = (s: MSubject) => (s.kind === 'externalId' ? { externalId: s.value } : { email: s.value });

type PrivacyBody = Parameters<Client['privacy']['requests']['create']>[0];
type PrivacyRequest = Awaited<ReturnType<Client['privacy']['requests']['wait']>>;

/** Creates a request and waits for it; it must complete, and no answer may echo the subject's identifier. */
async function privacyRequest(r: Real, body: PrivacyBody, subject: MSubject, what: string): Promise<PrivacyRequest> {
  const accepted = await r.client.privacy.requests.create(body);
  expect(accepted.status, what).toBe('pending');
  const done = await r.client.privacy.requests.wait(accepted.id, pollFast);
  expect(
    {
      status: done.status,
      error: done.error,
      type: done.type,
      scope: done.scope,
      dryRun: done.dryRun,
      subject: done.subject.kind,
      webhookRecipients: done.webhookRecipients,
    },
    `${what} (${done.id})`,
  ).toEqual({
    status: 'completed',
    error: null,
    type: body.type,
    scope: body.scope ?? null,
    dryRun: body.dryRun ?? false,
    subject: subject.kind,
    webhookRecipients: [],
  });
  const shown = JSON.stringify([accepted, done]).toLowerCase();
  expect(shown.includes(subject.value.toLowerCase()), `${what}: its answers echo the subject`).toBe(false);
  return done;
}

/** A download an erasure must have refused: 410 `export_erased`. */
async function expectErased(r: Real, kind: 'export' | 'access file', id: string) {
  const result =
    kind === 'export'
      ? await r.client.GET('/api/v1/exports/{exportId}/download', {
          params: { path: { exportId: id } },
          parseAs: 'stream',
        })
      : await r.client.GET('/api/v1/privacy-requests/{id}/download', { params: { path: { id } }, parseAs: 'stream' });
  if (!result.response.bodyUsed) await result.response.body?.cancel();
  const code = (result.error as { error?: { code?: string } } | undefined)?.error?.code;
  expect({ status: result.response.status, code }, `download of the erased ${kind} ${id}`).toEqual({
    status: 410,
    code: 'export_erased',
  });
}

/** Every response of a survey as the API lists it, with its respondent, against the model. */
async function compareResponses(m: Model, r: Real, survey: MSurvey) {
  const actual = (await listed(r, survey))
    .map((x) => ({ id: x.id, respondentExternalId: x.respondentExternalId }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const expected = live(m, survey)
    .map((x) => ({ id: x.id, respondentExternalId: x.respondent }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(actual, `responses of ${surveyName(survey)} as listed`).toEqual(expected);
}

/**
 * After a real erasure, the person is absent wherever the model can look: no record or SCIM user, the responses of
 * the surveys they answered as the model has them (deleted or without respondent), the recipients of the distributions
 * that had them, the figures of the surveys they answered, the events (`response.submitted` names exactly whom
 * the model says), the files that held them (410), and a personal link of theirs (404).
 */
async function compareAfterErasure(m: Model, r: Real, h: MHoldings, erased: MResponse[]) {
  for (const id of h.ids) {
    const respondent = await answered(
      r.client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: id } } }),
    );
    expectStatus(respondent, 404, 'not_found', `GET of the erased respondent ${id}`);
  }
  for (const p of h.records) {
    const users = await r.client.GET('/scim/v2/Users', {
      params: { query: { filter: `externalId eq "${p.externalId}"` } },
    });
    expect((users.data as { totalResults?: number } | undefined)?.totalResults, `SCIM users of ${p.externalId}`).toBe(
      0,
    );
  }
  for (const survey of new Set(erased.map((x) => x.survey))) await compareResponses(m, r, survey);
  for (const distribution of new Set(h.recipients.map((x) => x.distribution))) await compareRecipients(r, distribution);
  for (const survey of new Set(erased.map((x) => x.survey))) {
    await compareStatic(m, r, survey, {});
    await compareStatic(m, r, survey, { segmentBy: 'department' });
  }
  const events: { type: string; data: { id?: string; respondentExternalId?: string | null } }[] = [];
  for await (const e of r.client.events.listAll({ pageSize: 100 })) events.push(e as (typeof events)[number]);
  const named = (e: { responseId: string; respondent: string | null }) => `${e.responseId} ${e.respondent}`;
  expect(
    events
      .filter((e) => e.type === 'response.submitted' && typeof e.data.respondentExternalId === 'string')
      .map((e) => named({ responseId: e.data.id!, respondent: e.data.respondentExternalId! }))
      .sort(),
    'response.submitted events naming a respondent',
  ).toEqual(
    m.events
      .filter((e) => e.respondent !== null)
      .map(named)
      .sort(),
  );
  const text = JSON.stringify(events);
  const traces = [
    ...h.ids.map((id) => JSON.stringify(id)),
    ...h.emails,
    ...erased.filter((x) => x.deleted !== null).map((x) => x.id),
  ];
  expect(
    traces.filter((x) => text.includes(x)),
    'traces of the erased person in the events',
  ).toEqual([]);
  if (h.exports[0]) await expectErased(r, 'export', h.exports[0].id);
  if (h.accessFiles[0]) await expectErased(r, 'access file', h.accessFiles[0].id);
  const link = h.recipients[0]?.recipient.link;
  if (link) {
    const page = await fetch(link);
    await page.body?.cancel();
    expect(page.status, `the erased personal link of ${h.recipients[0]!.recipient.externalId}`).toBe(404);
  }
}

/**
 * A request's inventory against the model's; returns the holdings the server acted on. When an open finding
 * explains the difference, it is recorded, and the run goes on with the holdings the server found.
 */
function compareInventory(m: Model, r: Real, subject: MSubject, h: MHoldings, actual: unknown, what: string) {
  const expected = inventoryOf(h);
  if (!isDeepStrictEqual(actual, expected)) {
    const live = holdingsOf(m, subject, { liveExports: true });
    if (isDeepStrictEqual(actual, inventoryOf(live))) {
      const missed = h.exports.filter((e) => !live.exports.includes(e)).map((e) => e.id);
      foundOpen(
        'erased-deleted-exports',
        `the inventory of the ${what} counts ${live.exports.length} export files, not ${h.exports.length}: ${missed.join(', ')} ${missed.length === 1 ? 'holds' : 'hold'} a response of theirs deleted since`,
        r.log,
      );
      return live;
    }
  }
  expect(actual, `the inventory of the ${what}`).toEqual(expected);
  return h;
}

export type EraseMode = 'real' | 'dry' | 'dry+real';
export type ErasureScope = 'identity' | 'identity_and_responses';

export class Erase implements Cmd {
  constructor(
    readonly who: PrivacyWho,
    readonly scope: ErasureScope,
    readonly mode: EraseMode,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const subject = subjectOf(m, this.who);
    let h = holdingsOf(m, subject);
    const expected = inventoryOf(h);
    const what = `erasure (${this.scope}) of ${subjectText(subject)}`;
    const body = { type: 'erasure' as const, subject: subjectBody(subject), scope: this.scope };
    let dry: PrivacyRequest | undefined;
    if (this.mode !== 'real') {
      dry = await privacyRequest(r, { ...body, dryRun: true }, subject, `dry run of the ${what}`);
      expect(dry.downloadUrl).toBeNull();
      h = compareInventory(m, r, subject, h, dry.inventory, `dry run of the ${what} (${dry.id})`);
      if (this.mode === 'dry') {
        r.lastDryRun = { subject: subjectText(subject), expected, inventory: dry.inventory };
        saw(`privacy: dry-run erasure${h.responses.length > 0 ? ' finding responses' : ''}`);
        return;
      }
    }
    const real = await privacyRequest(r, body, subject, `the ${what}`);
    // A dry run reports what the real run then does, when nothing it counts changed in between.
    const earlier =
      dry ??
      (r.lastDryRun?.subject === subjectText(subject) && isDeepStrictEqual(r.lastDryRun.expected, expected)
        ? r.lastDryRun
        : undefined);
    if (earlier) {
      saw(`privacy: dry run compared with the real run${dry ? '' : ' (an earlier command)'}`);
      expect(real.inventory, `the ${what}: its inventory against the dry run's before it`).toEqual(earlier.inventory);
    }
    h = compareInventory(m, r, subject, h, real.inventory, `${what} (${real.id})`);
    r.lastDryRun = undefined;
    const erased = [...h.responses];
    applyErasure(m, h, this.scope, tick(m));
    r.log.push(
      `  ${real.id} = ${what}: ${h.ids.join(', ') || 'nobody'}; responses ${erased.map((x) => x.id).join(' ') || 'none'}; recipient rows ${h.recipients.length}; export files ${h.exports.map((x) => x.id).join(' ') || 'none'}; access files ${h.accessFiles.map((x) => x.id).join(' ') || 'none'}`,
    );
    saw(`privacy: erasure (${this.scope})${erased.length > 0 ? ' of responses' : ''}`);
    if (erased.some((x) => x.survey.allowMultiple && erased.filter((y) => y.survey === x.survey).length > 1))
      saw(`privacy: erasure (${this.scope}) of several responses to one survey`);
    if (h.exports.length > 0) saw('privacy: erasure of export files');
    if (h.accessFiles.length > 0) saw('privacy: erasure of access files');
    if (h.notIdentifiable.length > 0) saw('privacy: not identifiable responses');
    await compareAfterErasure(m, r, h, erased);
  }
  toString = () => `Erase(${whoText(this.who)}, ${this.scope}, ${this.mode})`;
}

type AccessFile = components['schemas']['PrivacyRequestAccessFile'];

export class Access implements Cmd {
  constructor(
    readonly who: PrivacyWho,
    readonly dryRun: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const subject = subjectOf(m, this.who);
    const what = `access request${this.dryRun ? ' (dry run)' : ''} about ${subjectText(subject)}`;
    const body = { type: 'access' as const, subject: subjectBody(subject), ...(this.dryRun ? { dryRun: true } : {}) };
    const done = await privacyRequest(r, body, subject, what);
    const h = compareInventory(m, r, subject, holdingsOf(m, subject), done.inventory, `${what} (${done.id})`);
    if (h.notIdentifiable.length > 0) saw('privacy: not identifiable responses');
    expect(done.downloadUrl, what).toBe(this.dryRun ? null : `/api/v1/privacy-requests/${done.id}/download`);
    if (this.dryRun) return;
    const text = await (await r.client.privacy.requests.download(done.id)).text();
    const file = JSON.parse(text) as AccessFile;
    expect(file.requestId).toBe(done.id);
    expect(
      {
        respondents: file.respondents.map((x) => ({
          externalId: x.externalId,
          email: x.email,
          department: x.department,
        })),
        scimUsers: file.scimUsers.map((x) => x.externalId),
        responses: file.responses,
        notIdentifiable: file.notIdentifiable,
        distributions: file.distributions
          .map((x) => ({
            distributionId: x.distributionId,
            surveyId: x.surveyId,
            method: x.method,
            status: x.status,
            respondedAt: x.respondedAt !== null,
            personalLink: x.personalLink,
            kioskCode: x.kioskCode,
            snapshot: { email: x.snapshot.email, department: x.snapshot.department },
          }))
          .sort((a, b) => (a.distributionId < b.distributionId ? -1 : 1)),
        unsubscribes: file.unsubscribes,
        webhookRecipients: file.webhookRecipients,
      },
      `the file of the ${what} (${done.id})`,
    ).toEqual(expectedAccessFile(h));
    // Nothing of anyone else: no other person's id or address, no other response, no link.
    const mine = new Set(h.responses.map((x) => x.id));
    const others = [
      ...m.people.filter((p) => !h.ids.includes(p.externalId)).flatMap((p) => [JSON.stringify(p.externalId), p.email]),
      ...[0, 1]
        .map(strangerId)
        .filter((id) => !h.ids.includes(id))
        .map((id) => JSON.stringify(id)),
      ...m.responses.filter((x) => !mine.has(x.id)).map((x) => x.id),
      '/s/',
    ];
    expect(
      others.filter((x) => text.includes(x)),
      `the file of the ${what} (${done.id}): what it holds of others`,
    ).toEqual([]);
    m.accessFiles.push({ id: done.id, subject, erased: false });
    saw(
      `privacy: access file${h.responses.length > 0 ? ' with responses' : ''}${h.recipients.length > 0 ? ' with distributions' : ''}`,
    );
    r.log.push(`  ${done.id} = ${what}: ${h.responses.length} responses, ${h.recipients.length} recipient rows`);
  }
  toString = () => `Access(${whoText(this.who)}${this.dryRun ? ', dry run' : ''})`;
}

// ---------------------------------------------------------------------------------------------------------------

const surveySel = fc.nat({ max: 5 });
const windowArb: fc.Arbitrary<Window | null> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant({ kind: 'noop' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .record({ after: fc.option(fc.nat({ max: 30 })), before: fc.option(fc.nat({ max: 30 })) })
      .filter((w) => w.after !== null || w.before !== null)
      .map((w) => ({ kind: 'cut' as const, ...w })),
  },
);

export const commandArbs: fc.Arbitrary<Cmd>[] = [
  fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.boolean(),
          fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
          fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
        )
        .map(([multiple, anonymous, launch]) => new CreateSurvey(multiple, anonymous, launch) as Cmd),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(surveySel, fc.constantFrom<Transition>('launch', 'launch', 'pause', 'close'))
        .map(([s, kind]) => new Transit(s, kind)),
    },
    {
      weight: 9,
      arbitrary: fc
        .tuple(surveySel, fc.array(fc.record({ who: whoArb, answer: answerArb }), { minLength: 1, maxLength: 8 }))
        .map(([s, a]) => new SubmitApi(s, a)),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(
          fc.nat({ max: 5 }),
          fc.array(fc.record({ recipient: fc.nat({ max: 11 }), answer: answerArb }), { minLength: 1, maxLength: 10 }),
        )
        .map(([d, a]) => new SubmitLink(d, a)),
    },
    { weight: 2, arbitrary: fc.nat({ max: 40 }).map((i) => new DeleteResponse(i)) },
    { weight: 3, arbitrary: fc.tuple(fc.nat({ max: 11 }), deptArb).map(([p, d]) => new PutRespondent(p, d)) },
    { weight: 1, arbitrary: fc.nat({ max: 11 }).map((p) => new DeleteRespondent(p)) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.record({ person: fc.nat({ max: 11 }), department: deptArb }), { minLength: 1, maxLength: 4 })
        .map((c) => new SyncRespondents(c)),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(surveySel, fc.constantFrom<'link' | 'email'>('link', 'email'), fc.option(filterArb, { freq: 3 }))
        .map(([s, method, f]) => new Distribute(s, method, f)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(surveySel, fc.constantFrom<Format>('json', 'ndjson', 'csv'))
        .map(([s, f]) => new ExportFull(s, f)),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(surveySel, fc.option(fc.nat({ max: 5 }), { freq: 3 }), fc.constantFrom<Format>('json', 'ndjson', 'csv'))
        .map(([s, b, f]) => new ExportIncrement(s, b, f)),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(
          surveySel,
          fc.record({
            segment: fc.boolean(),
            distribution: fc.option(fc.nat({ max: 5 }), { freq: 4 }),
            filter: fc.option(filterArb, { freq: 2 }),
            window: windowArb,
          }),
        )
        .map(([s, v]) => new ReadAnalytics(s, v)),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          { weight: 12, arbitrary: fc.integer({ min: 3, max: 5 }) },
          { weight: 4, arbitrary: fc.integer({ min: 6, max: 10 }) },
          { weight: 1, arbitrary: fc.constantFrom(2, 101) },
        )
        .map((n) => new SetThreshold(n)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          privacyWhoArb(3),
          fc.constantFrom<ErasureScope>('identity', 'identity_and_responses'),
          fc.constantFrom<EraseMode>('real', 'real', 'dry', 'dry+real'),
        )
        .map(([w, scope, mode]) => new Erase(w, scope, mode)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          privacyWhoArb(1),
          fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        )
        .map(([w, dryRun]) => new Access(w, dryRun)),
    },
  ),
];

export type { MResponse };
