/**
 * An independent judge of generated survey drafts, for the labelled prompts of `data/draft-prompts.tsv` (tests) and
 * `data/draft-prompts-unseen.tsv` (the benchmark only). Its vocabulary per theme is written from what each kind of
 * survey asks about, not taken from the generator's question bank or its cues: a draft is on its prompt's subject
 * when most of its questions speak of that subject in their own words. It reads only a question's text (and a
 * grid's rows), never its choices, so a list that happens to mention pay does not make a question about pay.
 * Shared by test/ai/draft-topic.test.ts and scripts/bench/ai-drafts.ts.
 */
import { readFileSync } from 'node:fs';
import type { components } from '../../server/src/generated/openapi.js';

type QuestionInput = components['schemas']['QuestionInput'];

/** Who answers a survey of each theme. */
export type JudgeAudience = 'employees' | 'customers' | 'candidates' | 'leavers' | 'attendees';

/**
 * What questions on each theme talk about: word stems matched case-insensitively at a word start. Broad themes
 * (satisfaction of customers, engagement) are broad here too, but never reach into the neighbouring themes' words.
 */
export const themeVocabulary: Record<string, { audience: JudgeAudience; words: RegExp }> = {
  engagement: {
    audience: 'employees',
    words:
      /\b(engag|proud|pride|motivat|accomplish|direction|mission|purpose|values?\b|believe in|recommend|place to work|work(ing)? here|employer|this company|the company|stay|leav(e|ing)|another (company|job|employer)|looking for a (new )?job|enjoy|cares? about me|expected of me|committ|inspir|enthusias|meaningful|happy|morale|loyal|future|belong|energi|contribut|make a difference|worthwhile|effort)/i,
  },
  wellbeing: {
    audience: 'employees',
    words:
      /\b(well-?being|wellness|stress|burn(ed|t)? ?out|mental|health|exhaust|energ|tired|fatigue|sleep|rest\b|breaks?\b|switch off|disconnect|recharge|sick|balance|overwhelm|anxi|cop(e|ing)|counsel|time off|holiday|vacation|pressure|workload|overtime|hours|calm|relax|emotion|worr|drain|support (you|your|for your)|look after|safe)/i,
  },
  manager: {
    audience: 'employees',
    words:
      /\b(manager|supervisor|team lead|lead(er|ers|ership)?\b|boss|one-to-one|1:1|one-on-one|coach|direct report)/i,
  },
  onboarding: {
    audience: 'employees',
    words:
      /\b(onboard|induction|orientation|first (day|days|week|weeks|month|months)|new (hire|joiner|starter|colleague|role)|joined|joining|welcome|buddy|settl|start(ed)? (here|date|with us|work)|your start|before you (started|joined)|ramp|set ?up|accounts?\b|equipment|introduc|new here|expected of me in my role|get started|up to speed)/i,
  },
  exit: {
    audience: 'leavers',
    words:
      /\b(leav|left\b|exit|resign|quit|depart|offboard|last (day|working day|weeks)|notice|stay|kept you|keep you|next (role|job|employer|step)|going next|hand ?over|alumni|recommend|place to work|again\b|rejoin|worked\b|working here|here\b|time (here|with us)|while (you|I) (were|was|worked)|looking back|(my|your) (role|manager|team|job|workload|pay|responsibilit))/i,
  },
  inclusion: {
    audience: 'employees',
    words:
      /\b(inclus|includ|belong|divers|equit|equal|fair(ly|ness)?\b|unfair|discriminat|bias|background|be myself|be yourself|respect|heard|voice|accessib|harass|exclu|minorit|gender|ethnic|disab|underrepresent|treated|identity|safe to|welcome)/i,
  },
  compensation: {
    audience: 'employees',
    words:
      /\b(pay|paid|salar|compensat|benefit|bonus|pension|wage|raise|reward|stock|insurance|allowance|perks?|financ|money|income|earn|retirement|health cover|parental leave|paid leave|annual leave)/i,
  },
  remote: {
    audience: 'employees',
    words:
      /\b(remote|hybrid|home|office|on-?site|in person|in-person|distributed|commut|wfh|location|flexib|set-?up|video|virtual|desk|days? a week|days? in)/i,
  },
  growth: {
    audience: 'employees',
    words:
      /\b(career|grow|growth|develop|learn|train|promot|progress|skill|mentor|stretch|advanc|aspiration|potential|course|qualif)/i,
  },
  workload: {
    audience: 'employees',
    words:
      /\b(workload|hours|overtime|deadline|capacity|time for|busy|too much|manageable|priorit|interrupt|meetings?\b|pace|pressure|overload|stretched|staff(ing|ed)|tasks?\b|demands?)/i,
  },
  recognition: {
    audience: 'employees',
    words:
      /\b(recogni|apprecia|thank|praise|acknowledg|valued|credit|reward|noticed|celebrat|shout-?out|good work|deserves?)/i,
  },
  communication: {
    audience: 'employees',
    words:
      /\b(communicat|inform|news|updates?\b|transparen|all-hands|town hall|newsletter|channels?\b|intranet|announce|hear about|honest answers|openly|messag|e-?mail|chat|meetings?\b|questions)/i,
  },
  tools: {
    audience: 'employees',
    words:
      /\b(tools?\b|equipment|software|laptop|systems?\b|it (support|team|requests?|service|department|help)|hardware|computer|devices?\b|vpn|apps?\b|technolog|screens?\b|log ?ins?\b|access|printer|phone)/i,
  },
  teamwork: {
    audience: 'employees',
    words:
      /\b(team|colleague|collaborat|cooperat|together|trust|conflict|help each other|psychological|safe to|speak up|mistakes?|disagree|peers?\b|share (ideas|knowledge)|support(s|ed)? (each other|one another)|rely on)/i,
  },
  performance: {
    audience: 'employees',
    words:
      /\b(performance|reviews?\b|apprais|goals?\b|objectives?\b|feedback|ratings?\b|calibrat|evaluat|assess|check-?ins?\b|expectations|promot|fair(ly)?\b)/i,
  },
  customer_satisfaction: {
    audience: 'customers',
    words:
      /\b(recommend|satisf|expectation|value|worth|loyal|keep using|continue|renew|switch|compet|alternative|trust|promise|happy|experience|overall|your score|(do|done) better|improve|choose us|chose us|rely|customer|provider|service|quality|reliab)/i,
  },
  customer_support: {
    audience: 'customers',
    words:
      /\b(support|help|issue|problem|ticket|request|resol|agent|contact|respon|repl(y|ied)|wait|answer|chat|call|phone|e-?mail|representative|hand ?overs?|first time|complaint|service)/i,
  },
  product: {
    audience: 'customers',
    words:
      /\b(product|feature|apps?\b|use\b|used\b|using|usab|easy to|reliab|bugs?\b|integrat|performance|speed|design|interface|function|platform|website|dashboard|documentation|roadmap|build|release|update|tool)/i,
  },
  purchase: {
    audience: 'customers',
    words:
      /\b(purchas|order|buy|bought|checkout|deliver|shipping|package|parcel|return|refund|price|payment|store|shop|cart|arriv|choose us|range)/i,
  },
  candidate: {
    audience: 'candidates',
    words:
      /\b(appl(y|ied|ying|ication|icant)|candidate|hiring|recruit|interview|offer|role|job|assessment|process|decision|careers?\b|position|vacancy|screening|selection|next steps|prepare)/i,
  },
  event: {
    audience: 'attendees',
    words:
      /\b(event|conference|summit|sessions?\b|speakers?\b|talks?\b|keynote|venue|agenda|attend|registration|network|catering|food|drink|programme|program\b|schedule|exhibit|booth|workshop|panel|travel|platform|organi[sz]|gala|hackathon|dinner|stands?\b)/i,
  },
  training: {
    audience: 'attendees',
    words:
      /\b(train|course|trainer|instructor|teacher|learn|materials?\b|exercises?\b|pace|objectives?\b|modules?\b|lessons?\b|content|apply what|skills?\b|class|workshop|webinar|sessions?\b|knowledge|bootcamp|practi[cs])/i,
  },
};

export interface LabelledPrompt {
  theme: string;
  /** The question types the prompt names (`yes_no`: a choice of yes or no). */
  types: string[];
  /** The questionCount to send, if any. */
  questionCount?: number;
  prompt: string;
  /** What the draft must hold: questionCount, else the count the prompt states, else 8. */
  expectedCount: number;
}

/** The count a prompt states in words the way people write it: "20 questions", "a 12-question survey". */
export function statedCount(prompt: string): number | undefined {
  const match = /\b(\d{1,2})[ -]questions?\b/i.exec(prompt);
  return match ? Number(match[1]) : undefined;
}

export function loadPrompts(file: URL | string): LabelledPrompt[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [theme, types, count, prompt] = line.split('\t') as [string, string, string, string];
      if (!themeVocabulary[theme]) throw new Error(`unknown theme ${theme} in ${String(file)}`);
      const questionCount = count === '-' ? undefined : Number(count);
      return {
        theme,
        types: types === '-' ? [] : types.split(','),
        ...(questionCount === undefined ? {} : { questionCount }),
        prompt,
        expectedCount: questionCount ?? statedCount(prompt) ?? 8,
      };
    });
}

export const promptsPath = new URL('./data/draft-prompts.tsv', import.meta.url);
export const unseenPromptsPath = new URL('./data/draft-prompts-unseen.tsv', import.meta.url);

/** A question's own words: its text, and a grid's rows (a grid's text says only how to answer). */
function wordsOf(question: QuestionInput): string[] {
  return question.type === 'matrix' ? [question.text, ...question.rows.map((row) => row.text)] : [question.text];
}

/** Whether a question is on the theme: its text names it, or (a grid) at least half of its rows do. */
export function isOnTheme(question: QuestionInput, theme: string): boolean {
  const words = themeVocabulary[theme]!.words;
  if (words.test(question.text)) return true;
  if (question.type !== 'matrix') return false;
  return question.rows.filter((row) => words.test(row.text)).length * 2 >= question.rows.length;
}

const YES_NO_EXTRAS = new Set(['not sure', 'maybe', "don't know", 'prefer not to say']);

/** Whether a question of the draft is of the type the prompt named. */
export function hasType(questions: readonly QuestionInput[], type: string): boolean {
  if (type !== 'yes_no') return questions.some((q) => q.type === type);
  return questions.some((q) => {
    if (q.type !== 'single_choice') return false;
    const labels = q.choices.map((c) => c.label.toLowerCase().replace(/[.!]$/, ''));
    return (
      labels.includes('yes') &&
      labels.includes('no') &&
      labels.length <= 3 &&
      labels.every((l) => l === 'yes' || l === 'no' || YES_NO_EXTRAS.has(l))
    );
  });
}

export interface Verdict {
  onTheme: number;
  total: number;
  /** The named types the draft lacks. */
  missingTypes: string[];
  countHonoured: boolean;
  /** Questions whose words do not name the theme, for the failure messages. */
  offTheme: string[];
}

export function judge(labelled: LabelledPrompt, questions: readonly QuestionInput[]): Verdict {
  const off = questions.filter((q) => !isOnTheme(q, labelled.theme));
  return {
    onTheme: questions.length - off.length,
    total: questions.length,
    missingTypes: labelled.types.filter((type) => !hasType(questions, type)),
    countHonoured: questions.length === labelled.expectedCount,
    offTheme: off.map((q) => `${q.type}: ${wordsOf(q).join(' / ')}`),
  };
}

/** A clear majority: two questions in three on the prompt's subject. */
export const CLEAR_MAJORITY = 2 / 3;
