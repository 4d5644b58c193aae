/**
 * The offline analyser: per comment, wink-nlp features (nlp.ts); then clustering of comments into themes.
 *
 * Clustering is keyword-based and deterministic, in two passes. (1) A curated workplace taxonomy (meetings,
 * workload, management, pay, growth…) whose cue lemmas claim the comments that mention them, each comment going
 * to the theme it mentions most. (2) Comments no taxonomy theme claims are grouped by their most frequent shared
 * content word (document frequency, ties alphabetical), greedily, so recurring topics outside the taxonomy
 * ("parking", "canteen") still become themes. Keywords are the theme's most characteristic terms and noun
 * phrases (frequency in the theme × inverse document frequency); quotes are the comments that carry most of
 * them, nearest the theme's mean sentiment, shortest first — always verbatim excerpts of the comments as given,
 * which are already redacted (analysis.ts); what may finally be quoted is decided there, as for every provider.
 */
import { analyseText, type TextFeatures } from './nlp.js';
import type { AnalysisInput, FoundTheme, TextFindings } from './provider.js';
import { withoutRedactionMarkers } from './redact.js';

interface TaxonomyTheme {
  name: string;
  cues: string[];
  /** Advice when the theme is mostly negative, and when it is mostly positive. */
  negative: string;
  positive: string;
}

export const taxonomy: TaxonomyTheme[] = [
  {
    name: 'meetings',
    cues: ['meeting', 'calendar', 'standup', 'stand-up', 'zoom', 'call'],
    negative: 'Cut recurring meetings and protect focus time, for example with one meeting-free day a week.',
    positive: 'Keep the current meeting rhythm and share what makes it work with other teams.',
  },
  {
    name: 'workload',
    cues: [
      'workload',
      'overwork',
      'overworked',
      'understaffed',
      'deadline',
      'overtime',
      'busy',
      'capacity',
      'pressure',
      'staffing',
      'headcount',
      'hour',
      'weekend',
    ],
    negative: 'Review workloads and staffing with the teams most affected, and make deadlines realistic.',
    positive: 'Keep workloads at their current level; they are seen as sustainable.',
  },
  {
    name: 'management',
    cues: [
      'manager',
      'management',
      'leadership',
      'leader',
      'boss',
      'supervisor',
      'micromanage',
      'micromanagement',
      'micromanaged',
      'director',
      'executive',
    ],
    negative: 'Work with managers on feedback, trust and support; consider manager training and upward feedback.',
    positive: 'Recognise the managers people praise and share their practices.',
  },
  {
    name: 'communication',
    cues: [
      'communication',
      'communicate',
      'information',
      'inform',
      'transparency',
      'transparent',
      'announcement',
      'update',
      'news',
      'town',
      'all-hands',
    ],
    negative: 'Communicate decisions earlier and more openly, and explain the reasons behind them.',
    positive: 'Keep communicating as openly as now.',
  },
  {
    name: 'pay and benefits',
    cues: [
      'pay',
      'salary',
      'compensation',
      'bonus',
      'raise',
      'wage',
      'benefit',
      'pension',
      'underpaid',
      'money',
      'equity',
      'insurance',
    ],
    negative: 'Review pay against the market and explain how pay decisions are made.',
    positive: 'Keep pay and benefits competitive, and make sure people know about them.',
  },
  {
    name: 'career growth',
    cues: [
      'career',
      'growth',
      'promotion',
      'promote',
      'development',
      'learn',
      'learning',
      'training',
      'course',
      'skill',
      'progression',
      'mentor',
      'mentoring',
      'mentorship',
      'grow',
    ],
    negative: 'Make career paths and promotion criteria clear, and give everyone a development conversation.',
    positive: 'Keep investing in learning and mentoring; they are valued.',
  },
  {
    name: 'flexibility',
    cues: ['remote', 'hybrid', 'flexible', 'flexibility', 'home', 'wfh', 'commute', 'schedule'],
    negative: 'Revisit the remote and hybrid rules with the teams, and make them consistent.',
    positive: 'Keep and publicise the flexible working policy.',
  },
  {
    name: 'tools',
    cues: [
      'tool',
      'laptop',
      'software',
      'system',
      'equipment',
      'computer',
      'vpn',
      'hardware',
      'app',
      'jira',
      'monitor',
      'wifi',
      'internet',
      'printer',
    ],
    negative: 'Fix the tools people name most, starting with the slowest or least reliable.',
    positive: 'Keep the current tools; people find they help.',
  },
  {
    name: 'team and culture',
    cues: [
      'culture',
      'team',
      'colleague',
      'teammate',
      'coworker',
      'atmosphere',
      'environment',
      'collaboration',
      'collaborate',
      'people',
      'morale',
    ],
    negative: 'Look into team dynamics and collaboration where people report friction.',
    positive: 'Protect the team spirit people describe; celebrate it.',
  },
  {
    name: 'recognition',
    cues: [
      'recognition',
      'recognise',
      'recognize',
      'appreciate',
      'appreciation',
      'credit',
      'praise',
      'reward',
      'thank',
      'valued',
      'undervalued',
      'unappreciated',
    ],
    negative: 'Make recognition regular and visible, from managers and peers.',
    positive: 'Keep recognising good work as visibly as now.',
  },
  {
    name: 'wellbeing',
    cues: [
      'stress',
      'stressed',
      'stressful',
      'burnout',
      'health',
      'mental',
      'wellbeing',
      'tired',
      'exhausted',
      'anxiety',
      'sick',
      'balance',
      'break',
      'rest',
    ],
    negative:
      'Address stress and burnout: check workloads, encourage breaks and time off, and promote the support available.',
    positive: 'Keep the wellbeing support people appreciate.',
  },
  {
    name: 'onboarding',
    cues: ['onboarding', 'onboard', 'orientation', 'buddy', 'induction', 'newcomer', 'joiner', 'hire'],
    negative: 'Improve onboarding: ready equipment on day one, a buddy, and a clear first-month plan.',
    positive: 'Keep the onboarding programme; newcomers value it.',
  },
  {
    name: 'office',
    cues: [
      'office',
      'desk',
      'kitchen',
      'parking',
      'canteen',
      'coffee',
      'chair',
      'noise',
      'noisy',
      'building',
      'space',
      'room',
      'lunch',
      'food',
    ],
    negative: 'Fix the office issues people raise (space, noise, facilities).',
    positive: 'Keep the office facilities people appreciate.',
  },
  {
    name: 'processes',
    cues: [
      'process',
      'bureaucracy',
      'bureaucratic',
      'approval',
      'paperwork',
      'policy',
      'procedure',
      'decision',
      'red tape',
      'documentation',
    ],
    negative: 'Simplify the processes and approvals people find slow.',
    positive: 'Keep processes as lean as they are.',
  },
];

const cueIndex = new Map<string, number>();
taxonomy.forEach((theme, i) => theme.cues.forEach((cue) => cueIndex.set(cue, i)));

const MAX_THEMES = 20;
const MAX_QUOTE = 300;

/** The comment's best taxonomy theme: the one whose cues it mentions most (ties: taxonomy order). */
function taxonomyThemeOf(features: TextFeatures): number | undefined {
  const hits = new Map<number, number>();
  for (const term of features.forms) {
    const theme = cueIndex.get(term);
    if (theme !== undefined) hits.set(theme, (hits.get(theme) ?? 0) + 1);
  }
  let best: number | undefined;
  let bestHits = 0;
  for (const [theme, count] of hits) {
    if (count > bestHits || (count === bestHits && best !== undefined && theme < best)) {
      best = theme;
      bestHits = count;
    }
  }
  return best;
}

/** An excerpt of a comment for quoting: the whole comment when short, else its first sentence with a keyword. */
function excerpt(text: string, keywords: readonly string[]): string {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_QUOTE) return trimmed;
  const sentences = trimmed.match(/[^.!?]+[.!?]*/g) ?? [trimmed];
  const lower = (s: string) => s.toLowerCase();
  const withKeyword = sentences.find((s) => keywords.some((k) => lower(s).includes(k.split(' ')[0]!))) ?? sentences[0]!;
  return withKeyword.trim().slice(0, MAX_QUOTE).trim();
}

function keywordsOf(
  members: readonly number[],
  features: readonly TextFeatures[],
  documentFrequency: Map<string, number>,
  total: number,
): string[] {
  const counts = new Map<string, number>();
  for (const i of members) {
    const f = features[i]!;
    for (const term of new Set([...f.terms, ...f.phrases])) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, count]) => count >= Math.min(2, members.length))
    .map(([term, count]) => ({
      term,
      weight: count * Math.log((total + 1) / (documentFrequency.get(term) ?? 1)) * (term.includes(' ') ? 1.5 : 1),
    }))
    .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1))
    .slice(0, 6)
    .map((k) => k.term);
}

export function analyseOffline(input: AnalysisInput): TextFindings {
  // The comments come redacted; the markers ("[email]") are not words of the answer, so they must not become
  // terms, keywords or themes of their own.
  const features = input.comments.map((c) => analyseText(withoutRedactionMarkers(c.text)));
  const sentiments = features.map((f) => f.sentiment);
  const words = features.reduce((sum, f) => sum + f.words, 0);
  const stopWords = features.reduce((sum, f) => sum + f.stopWords, 0);
  // English prose is about 40–50 % stop words; another language has almost none of ours.
  const language = input.comments.length === 0 ? null : words > 0 && stopWords / words < 0.12 ? 'und' : 'en';

  const documentFrequency = new Map<string, number>();
  for (const f of features)
    for (const term of new Set([...f.terms, ...f.phrases]))
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);

  // Pass 1: the taxonomy.
  const byTaxonomy = new Map<number, number[]>();
  const unclaimed: number[] = [];
  features.forEach((f, i) => {
    const theme = taxonomyThemeOf(f);
    if (theme === undefined) unclaimed.push(i);
    else {
      const members = byTaxonomy.get(theme);
      if (members) members.push(i);
      else byTaxonomy.set(theme, [i]);
    }
  });
  const clusters: Array<{ name: string; members: number[]; taxonomy?: TaxonomyTheme }> = [...byTaxonomy].map(
    ([theme, members]) => ({
      name: taxonomy[theme]!.name,
      members,
      taxonomy: taxonomy[theme],
    }),
  );

  // Pass 2: emergent themes among the rest, by the most shared noun or verb lemma.
  let rest = unclaimed;
  const minimumShared = 2;
  while (rest.length >= minimumShared && clusters.length < MAX_THEMES * 2) {
    const df = new Map<string, number>();
    for (const i of rest) for (const term of new Set(features[i]!.terms)) df.set(term, (df.get(term) ?? 0) + 1);
    let best: string | undefined;
    let bestCount = 0;
    for (const [term, count] of df) {
      if (count > bestCount || (count === bestCount && best !== undefined && term < best)) {
        best = term;
        bestCount = count;
      }
    }
    if (!best || bestCount < minimumShared) break;
    const members = rest.filter((i) => features[i]!.terms.includes(best));
    clusters.push({ name: best, members });
    const taken = new Set(members);
    rest = rest.filter((i) => !taken.has(i));
  }

  const themes: FoundTheme[] = clusters
    .sort((a, b) => b.members.length - a.members.length || (a.name < b.name ? -1 : 1))
    .slice(0, MAX_THEMES * 2)
    .map((cluster) => {
      const keywords = keywordsOf(cluster.members, features, documentFrequency, features.length);
      const mean = cluster.members.reduce((sum, i) => sum + sentiments[i]!, 0) / cluster.members.length;
      const hits = new Map(
        cluster.members.map((i) => [
          i,
          keywords.filter((k) => features[i]!.terms.includes(k) || features[i]!.phrases.includes(k)).length,
        ]),
      );
      const quoteOrder = [...cluster.members].sort(
        (a, b) =>
          hits.get(b)! - hits.get(a)! ||
          Math.abs(sentiments[a]! - mean) - Math.abs(sentiments[b]! - mean) ||
          input.comments[a]!.text.length - input.comments[b]!.text.length ||
          a - b,
      );
      const quotes: string[] = [];
      for (const i of quoteOrder) {
        const quote = excerpt(input.comments[i]!.text, keywords);
        if (quote.length > 0 && !quotes.includes(quote)) quotes.push(quote);
        if (quotes.length === 3) break;
      }
      const advice = cluster.taxonomy
        ? mean < -0.05
          ? cluster.taxonomy.negative
          : cluster.taxonomy.positive
        : undefined;
      return {
        name: cluster.name,
        keywords: keywords.length > 0 ? keywords : [cluster.name],
        comments: cluster.members,
        quotes,
        ...(advice ? { recommendation: advice } : {}),
      };
    });
  return { language, sentiments, themes };
}
