/**
 * Static analytics: each question's figures for the whole result and per group (a respondent field or a manager's
 * tree), the outcome's correlations, participation and responses per day, released through the audit of the
 * survey's released results. The parameters, scope and measuring they share with smart analytics are in core.ts.
 */
import type {
  Question,
  QuestionStats,
  StaticAnalytics,
  StaticAnalyticsSegment as StaticSegment,
} from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { iso } from '../../lib/time.js';
import {
  contextOf,
  measureScope,
  outcomeOrThrow,
  parseSegment,
  participationOf,
  treeManagerOrThrow,
  windowOrThrow,
  type AnalyticsRequest,
} from './core.js';
import { measureManagerTree } from './manager-tree.js';
import * as repository from './repository.js';
import type { AnalyticsScope, CellRow, CorrelationVariable, SegmentField } from './repository.js';
import { auditShown, measuredStill, segmentKey, treeKey } from './release-gate.js';
import { MARKS_POSITION, matrixRowCodes, questionStats, round, type Histogram } from './statistics.js';
import { hiddenReason, resultSuppressed } from './suppression.js';

/**
 * Asks for the exact counts in the same round trip as the survey and settings lookups, when the request alone
 * shows they may answer it (whole days, no filter or distribution, a counted segment). `measureScope` uses the
 * rows only if the survey then turns out to take one response per respondent; otherwise they are dropped
 * (the queries are filtered by tenant and survey, so a request for another tenant's survey reads nothing).
 */
function countsAhead(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: AnalyticsRequest,
  segment: SegmentField | undefined,
): Promise<CellRow[]> | undefined {
  if (request.filters !== undefined || request.distributionId !== undefined) return undefined;
  let window: { after?: Date; before?: Date };
  try {
    window = windowOrThrow(request);
  } catch {
    return undefined; // contextOf refuses the request
  }
  const scope: AnalyticsScope = {
    tenant,
    surveyId,
    submittedAfter: window.after,
    submittedBefore: window.before,
    segment,
    distinctRespondents: false,
    snapshots: false,
  };
  if (
    !repository.dailyCountsApply({ ...scope, segment: undefined }) ||
    (segment && !repository.segmentCountsApply(scope))
  )
    return undefined;
  const rows = Promise.all([
    repository.dailyCellCounts(db, scope),
    segment ? repository.segmentCellCounts(db, scope) : Promise.resolve([]),
  ]).then(([whole, groups]) => [...whole, ...groups]);
  rows.catch(() => undefined); // a refused request never waits for it
  return rows;
}

type SuppressionReason = NonNullable<StaticAnalytics['suppressionReason']>;

/**
 * Static analytics, released through the audit of the survey's released results (release-gate.ts): the figures
 * are measured, the groups the anonymity rules let through are put to the audit, and what it withholds is shown as
 * suppressed (`released_overlap`). The audit reads the groups' responses in a statement of its own; should a
 * response have come or gone in between (a group's count differs), the result is measured again.
 */
export async function getStaticAnalytics(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: AnalyticsRequest,
): Promise<StaticAnalytics> {
  return measuredStill((lastTry) => measureStaticAnalytics(db, tenant, surveyId, request, lastTry));
}

async function measureStaticAnalytics(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: AnalyticsRequest,
  lastTry: boolean,
): Promise<StaticAnalytics | undefined> {
  const manager = treeManagerOrThrow(request);
  const segment = manager === undefined ? parseSegment(request.segmentBy) : undefined;
  const early = countsAhead(db, tenant, surveyId, request, segment);
  const context = await contextOf(db, tenant, surveyId, request, segment);
  const { survey, threshold, scope } = context;
  const outcome =
    request.outcomeQuestionId === undefined ? undefined : outcomeOrThrow(survey.questions, request.outcomeQuestionId);
  // What correlates with the outcome: the other nps and rating questions, and each row of a numeric-scale matrix
  // (analysed like a rating question).
  type Correlated = { position: number; row?: number; variable: CorrelationVariable };
  const others: Correlated[] =
    outcome === undefined
      ? []
      : survey.questions.flatMap((q, position): Correlated[] =>
          (q.type === 'nps' || q.type === 'rating') && position !== outcome
            ? [{ position, variable: { num: position + 1 } }]
            : q.type === 'matrix' && q.scale
              ? q.rows.map((_, row) => ({ position, row, variable: { cells: matrixRowCodes(position, row) } }))
              : [],
        );
  const numberQuestions = survey.questions.filter((q) => q.type === 'number').map((q) => q.id);
  const [measured, participation, correlations, tree, numbers] = await Promise.all([
    measureScope(db, scope, threshold, early),
    participationOf(db, { ...context, scope: { ...scope, segment: undefined } }),
    outcome === undefined
      ? Promise.resolve([])
      : repository.outcomeCorrelations(
          db,
          { ...scope, segment: undefined },
          outcome + 1,
          others.map((other) => other.variable),
        ),
    manager === undefined
      ? Promise.resolve(undefined)
      : measureManagerTree(db, scope, manager, threshold, numberQuestions),
    // The whole result's number answers (and a column's segments'; a tree reads its own).
    repository.numberValues(db, scope, numberQuestions),
  ]);
  /** Number answers of the whole result (`segment` undefined) or of one segment's group. */
  const numbersOf = (segment?: string | null) => (questionId: string) =>
    numbers.find(
      (row) =>
        row.questionId === questionId && (segment === undefined ? row.whole : !row.whole && row.segment === segment),
    )?.values ?? [];
  /** The figures of one question, from its histograms and (number questions) its answers. */
  const statsOf = (
    question: Question,
    position: number,
    histograms: Map<number, Histogram>,
    answersOf: (questionId: string) => readonly number[],
  ) =>
    questionStats(
      question,
      histograms.get(position),
      histograms.get(MARKS_POSITION + position),
      question.type === 'number' ? answersOf(question.id) : [],
    );
  const withOutcome = (stats: QuestionStats, position: number): QuestionStats => {
    const correlationOf = (row?: number) => {
      const i = others.findIndex((other) => other.position === position && other.row === row);
      if (i < 0) return undefined;
      const { n, corr } = correlations[i]!;
      return {
        outcomeQuestionId: request.outcomeQuestionId!,
        correlation: corr === null || n < threshold ? null : round(corr, 3),
        responseCount: n,
      };
    };
    if (stats.type === 'nps' || stats.type === 'rating') {
      const outcomeCorrelation = correlationOf();
      return outcomeCorrelation ? { ...stats, outcomeCorrelation } : stats;
    }
    if (stats.type === 'matrix')
      return {
        ...stats,
        rows: stats.rows.map((row, index) => {
          const outcomeCorrelation = correlationOf(index);
          return outcomeCorrelation ? { ...row, outcomeCorrelation } : row;
        }),
      };
    return stats;
  };
  const hidden = resultSuppressed(measured.whole.respondents, threshold);
  // What the anonymity rules let through, to the audit, the whole result first; each with its size as measured.
  const shown = new Map<string, number>(hidden ? [] : [['whole', measured.whole.responses]]);
  if (!hidden && tree) for (const group of tree) if (!group.suppressed) shown.set(treeKey(group), group.responses);
  if (!hidden && !tree && segment)
    for (const group of measured.groups) if (!group.suppressed) shown.set(segmentKey(group.value), group.responses);
  const { withheld, moved } = await auditShown(db, scope, threshold, shown, manager);
  if (moved && !lastTry) return undefined;
  const suppressed = hidden || withheld.has('whole');
  const base = {
    surveyId,
    submittedAfter: request.submittedAfter ?? null,
    submittedBefore: request.submittedBefore ?? null,
    distributionId: request.distributionId ?? null,
    segmentBy: request.segmentBy ?? null,
    anonymityThreshold: threshold,
    // Recipients come from distributions; without any, there is no denominator.
    invitedCount: participation?.invited ?? null,
    responseRate: participation?.rate ?? null,
    generatedAt: iso(new Date()),
  };
  if (suppressed)
    return {
      ...base,
      invitedCount: null,
      responseRate: null,
      suppressed: true,
      suppressionReason: hidden ? 'threshold' : 'released_overlap',
      responseCount: 0,
      questions: [],
      daily: [],
      segments: [],
    };
  const questions = survey.questions;
  const reasonOf = (key: string, suppressed: boolean, respondents: number): SuppressionReason | null =>
    withheld.has(key) ? 'released_overlap' : suppressed ? hiddenReason(respondents, threshold) : null;
  return {
    ...base,
    suppressed: false,
    suppressionReason: null,
    responseCount: measured.whole.responses,
    questions: questions.map((question, position) =>
      withOutcome(statsOf(question, position, measured.whole.histograms, numbersOf()), position),
    ),
    daily: measured.days,
    segments: tree
      ? tree.map((group): StaticSegment => {
          const reason = reasonOf(treeKey(group), group.suppressed, group.respondents);
          return reason
            ? {
                value: group.value,
                managerTreeGroup: group.group,
                suppressed: true,
                suppressionReason: reason,
                responseCount: null,
                questions: null,
              }
            : {
                value: group.value,
                managerTreeGroup: group.group,
                suppressed: false,
                suppressionReason: null,
                responseCount: group.responses,
                questions: questions.map((question, position) =>
                  statsOf(question, position, group.histograms, (id) => group.numbers.get(id) ?? []),
                ),
              };
        })
      : segment
        ? measured.groups.map((group): StaticSegment => {
            const reason = reasonOf(segmentKey(group.value), group.suppressed, group.respondents);
            return reason
              ? {
                  value: group.value,
                  suppressed: true,
                  suppressionReason: reason,
                  responseCount: null,
                  questions: null,
                }
              : {
                  value: group.value,
                  suppressed: false,
                  suppressionReason: null,
                  responseCount: group.responses,
                  questions: questions.map((question, position) =>
                    statsOf(question, position, group.histograms, numbersOf(group.value)),
                  ),
                };
          })
        : [],
  };
}
