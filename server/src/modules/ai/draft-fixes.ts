/**
 * A provider's proposal made storable the way a person's `createSurvey` body would be checked: `problemsOf` is the
 * contract's validation (service.ts `draftProblems`: the SurveyCreate schema, then the surveys module's
 * `normaliseQuestions`), never a second one. The parts that can go without the rest — a question of the newer types,
 * an option, a display rule, a key — are dropped or repaired, each reported with the validation's own words;
 * problems elsewhere (a rating's scale, the survey itself) are left for the caller, which asks the model again or
 * refuses the draft.
 */
import type {
  DisplayCondition,
  QuestionInput,
  SurveyDraftAdjustment as DraftAdjustment,
} from '../../generated/openapi.js';
import type { SurveyDraft } from './offline-generate.js';

export type { DraftAdjustment };

/** A problem of a draft: a JSON pointer into it and a message. */
export interface DraftProblem {
  path: string;
  message: string;
}

/** Questions dropped whole when the contract refuses them: the types a draft can do without. */
const DROPPABLE = new Set<QuestionInput['type']>(['matrix', 'ranking', 'number', 'date']);
const KEY = /^[a-z0-9][a-z0-9_.-]{0,99}$/;

/** A key as the contract writes keys, when the proposal is close (`Engagement Recommend` → `engagement-recommend`). */
export function keyLike(key: string): string | undefined {
  const slug = key
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100)
    .replace(/-+$/, '');
  return KEY.test(slug) ? slug : undefined;
}

const rulesOf = (condition: DisplayCondition) =>
  'all' in condition && condition.all
    ? { kind: 'all' as const, rules: condition.all }
    : { kind: 'any' as const, rules: condition.any! };

/**
 * Drops or repairs what `problemsOf` refuses until nothing droppable is left. `draft`'s questions carry ids (the
 * proposal's numbering), so that a rule keeps naming the question it meant when one before it goes; they are
 * numbered again at the end (`q_1`, `q_2`…, as `createSurvey` would). Paths in the adjustments are the proposal's:
 * `origins` gives each question's place in it.
 */
export function fixDraft(
  draft: SurveyDraft,
  problemsOf: (draft: SurveyDraft) => DraftProblem[],
  origins: readonly number[] = (draft.questions ?? []).map((_, i) => i),
): { draft: SurveyDraft; adjustments: DraftAdjustment[]; problems: DraftProblem[] } {
  const adjustments: DraftAdjustment[] = [];
  // Each question with its place in the proposal and its rules' places in the proposal's displayIf.
  let items = (draft.questions ?? []).map((question, i) => ({
    question: { ...structuredClone(question), id: question.id ?? `proposed_${i}` },
    origin: origins[i] ?? i,
    ruleOrigins: question.displayIf ? rulesOf(question.displayIf).rules.map((_, j) => j) : [],
    keyRepaired: false,
  }));
  const dropped = new Set<string>();
  const current = (): SurveyDraft => ({ ...draft, questions: items.map((item) => item.question) });
  let problems = problemsOf(current());
  // Each round removes or changes at least one part, so the rounds are bounded by the draft's parts.
  for (let round = 0; round < 1000 && problems.length > 0; round++) {
    const fixes = new Map<number, { rules: Map<number, string>; displayIf?: string; key?: string; drop?: string }>();
    const fixOf = (i: number) => {
      let fix = fixes.get(i);
      if (!fix) fixes.set(i, (fix = { rules: new Map() }));
      return fix;
    };
    const generic: Array<{ i: number; problem: DraftProblem; rest: string }> = [];
    const left: DraftProblem[] = [];
    for (const problem of problems) {
      const match = /^\/questions\/(\d+)(\/.*)?$/.exec(problem.path);
      const i = match ? Number(match[1]) : -1;
      if (!match || !items[i]) {
        left.push(problem);
        continue;
      }
      const rest = match[2] ?? '';
      const rule = /^\/displayIf\/(all|any)\/(\d+)(\/|$)/.exec(rest);
      if (rule) fixOf(i).rules.set(Number(rule[2]), problem.message);
      else if (rest.startsWith('/displayIf')) fixOf(i).displayIf = problem.message;
      else if (rest === '/key') fixOf(i).key = problem.message;
      else generic.push({ i, problem, rest });
    }
    // The reason given for a dropped question: its own variant's words first. A question that fails its schema is
    // reported by every variant, the others with its type or its properties at the question itself.
    const specific = ({ rest }: { rest: string }) => (rest !== '' && rest !== '/type' ? 0 : 1);
    generic.sort((a, b) => specific(a) - specific(b));
    // A question's other problems wait while a part of it is fixed: when it fails its schema, every variant of the
    // question types reports it, so the part may be all that is wrong.
    for (const { i, problem, rest } of generic) {
      if (fixes.has(i)) continue;
      if (DROPPABLE.has(items[i]!.question.type))
        fixOf(i).drop ??= `${rest.slice(1) || 'the question'} ${problem.message}`;
      else left.push(problem);
    }
    let changed = false;
    items = items.flatMap((item, i) => {
      const fix = fixes.get(i);
      if (!fix) return [item];
      const at = `/questions/${item.origin}`;
      if (fix.drop !== undefined) {
        adjustments.push({ path: at, action: 'dropped', reason: fix.drop });
        dropped.add(item.question.id);
        changed = true;
        return [];
      }
      const question = item.question;
      if (fix.key !== undefined && typeof question.key === 'string') {
        changed = true;
        const repaired = item.keyRepaired ? undefined : keyLike(question.key);
        if (repaired !== undefined && repaired !== question.key) {
          adjustments.push({ path: `${at}/key`, action: 'repaired', reason: `${fix.key}; written ${repaired}` });
          question.key = repaired;
          item.keyRepaired = true;
        } else {
          adjustments.push({ path: `${at}/key`, action: 'dropped', reason: fix.key });
          delete question.key;
        }
      }
      if (question.displayIf && (fix.displayIf !== undefined || fix.rules.size > 0)) changed = true;
      if (question.displayIf && fix.displayIf !== undefined) {
        adjustments.push({ path: `${at}/displayIf`, action: 'dropped', reason: fix.displayIf });
        delete question.displayIf;
        item.ruleOrigins = [];
      } else if (question.displayIf && fix.rules.size > 0) {
        const { kind, rules } = rulesOf(question.displayIf);
        const kept = rules.flatMap((rule, j) => {
          const reason = fix.rules.get(j);
          if (reason === undefined) return [{ rule, origin: item.ruleOrigins[j]! }];
          adjustments.push({
            path: `${at}/displayIf/${kind}/${item.ruleOrigins[j]}`,
            action: 'dropped',
            reason: dropped.has(rule.questionId) ? `${rule.questionId} was dropped (see its adjustment)` : reason,
          });
          return [];
        });
        item.ruleOrigins = kept.map((k) => k.origin);
        if (kept.length > 0) question.displayIf = { [kind]: kept.map((k) => k.rule) } as DisplayCondition;
        else delete question.displayIf;
      }
      return [item];
    });
    // Nothing this round could fix: the rest is the caller's.
    if (!changed) break;
    problems = problemsOf(current());
  }
  // Numbered again in order, the rules following their questions.
  const renamed = new Map(items.map((item, k) => [item.question.id, `q_${k + 1}`]));
  const questions = items.map(({ question }) => {
    const named = { ...question, id: renamed.get(question.id!)! };
    if (question.displayIf) {
      const { kind, rules } = rulesOf(question.displayIf);
      named.displayIf = {
        [kind]: rules.map((rule) => ({ ...rule, questionId: renamed.get(rule.questionId) ?? rule.questionId })),
      } as DisplayCondition;
    }
    return named as QuestionInput;
  });
  const fixed = { ...draft, questions };
  // The contract's bound on a reason (the validation's messages are far shorter; a key quoted in one may not be).
  for (const adjustment of adjustments)
    if (adjustment.reason.length > 500) adjustment.reason = `${adjustment.reason.slice(0, 499)}…`;
  // What is left, at the proposal's places.
  const left = problems.length === 0 ? [] : problemsOf(fixed);
  return {
    draft: fixed,
    adjustments,
    problems: left.map((problem) => ({
      ...problem,
      path: problem.path.replace(/^\/questions\/(\d+)/, (whole, k: string) =>
        items[Number(k)] ? `/questions/${items[Number(k)]!.origin}` : whole,
      ),
    })),
  };
}
