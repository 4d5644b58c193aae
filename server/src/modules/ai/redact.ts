/**
 * What text may leave an analysis: the one owner of redaction in the AI module. Every text an analysis reads is
 * redacted here before any provider sees it (`prepareInput`), and every text of its result that a provider wrote
 * or that quotes an answer passes here again (`assemble`), whichever the provider — the offline analyser and a
 * remote model get the same text and their output meets the same rules.
 *
 * Redacted: e-mail addresses → `[email]`, URLs → `[url]`, phone numbers → `[phone]`, and the names of the
 * organization's respondents (same organization and environment) → `[name]`.
 *
 * - Phone numbers: 7 or more digits in one run, with spaces, dots, dashes, slashes and parentheses between them
 *   and an optional leading `+` — international (`+44 20 7946 0958`, `+1 (555) 123-4567`, `0049 30 12345678`)
 *   and national spellings (`(020) 7946-0958`, `030/1234567`). Shorter figures stay ("3 releases", "9:30",
 *   "Q3 2024"); so do dates and year ranges (`2024-03-15`, `15.03.2024`, `2019-2021`). Any other long digit run
 *   (an order number, "1 000 000") is redacted too: recall matters more than precision here.
 * - Names: every part of a respondent's first and last name (split at spaces and hyphens, two letters or more),
 *   as a whole word, case-insensitively, a trailing possessive "'s" included. A part that is also an English word
 *   ("Will", "Bell", "Rose": in the offline model's vocabulary) is redacted only when written with a capital
 *   ("Will Bell" goes, "I will ring the bell" stays); a part that is only a name ("Priya") goes in any case,
 *   since people write names in lower case too. A capitalised common word that is someone's name is redacted even
 *   where it starts a sentence ("Will we…") — erring on the side of the respondent.
 */
import { isEnglishWord } from './nlp.js';

export interface Redactor {
  (text: string): string;
}

// Each match may only start where a run of its characters starts (the lookbehinds): otherwise a long run
// without "@" or a known ending is rescanned from every position, quadratic in an answer of 10,000 characters.
const email =
  /(?<![\p{L}\p{N}._%+'’-])[\p{L}\p{N}_%+-][\p{L}\p{N}._%+'’-]*@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
const url =
  /\b(?:https?:\/\/|www\.)[^\s<>"')\]]+|(?<![a-z0-9.-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|co|gov|edu|info|app)(?:\/[^\s<>"')\]]*)?/gi;

// One "unit" is a digit or a parenthesised group ("(020)", "(0)", "(+44)"); between units at most one
// separator: a dot or dash with optional spaces around it, one or two spaces, or a slash.
const unit = String.raw`(?:\([ \u00a0]?\+?\d{1,5}[ \u00a0]?\)|\d)`;
const separator = String.raw`(?:[ \u00a0]?[.\-–][ \u00a0]?|[ \u00a0]{1,2}|\/)`;
const phone = new RegExp(
  String.raw`(?<![\p{L}\p{N}+])(?:\+[ \u00a0]?)?${unit}(?:${separator}?${unit}){6,40}(?![\p{L}\p{N}])`,
  'gu',
);
const date = String.raw`(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|(?:19|20)\d{2})`;
const dateOrRange = new RegExp(String.raw`^${date}(?:[ \u00a0]?[-–/][ \u00a0]?${date})?$`);

/** Words for name matching: letters (with combining marks), apostrophes only inside ("O'Neil", "Priya's"). */
const word = /[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*/gu;
const marker = /\[(?:name|email|phone|url)\]/g;

/** The form names are compared in: NFC, plain apostrophes, no possessive "'s". Case is kept. */
const normalised = (w: string) => w.normalize('NFC').replace(/’/g, "'").replace(/'s$/i, '');
const capitalised = (w: string) => /^\p{Lu}/u.test(w);

function redactPhone(match: string): string {
  const digits = match.replace(/\D/g, '').length;
  return digits < 7 || dateOrRange.test(match) ? match : '[phone]';
}

/** A redactor for the given respondents' names (full names or parts; each part of two letters or more counts). */
export function redactor(names: readonly string[]): Redactor {
  /** Lower-case name part → whether its lower-case spelling is redacted too (it is not an English word). */
  const known = new Map<string, boolean>();
  for (const name of names) {
    for (const part of normalised(name).split(/[\s-]+/)) {
      const key = part.toLowerCase();
      if (key.length >= 2 && !known.has(key)) known.set(key, !isEnglishWord(key));
    }
  }
  return (text: string) => {
    let out = text
      .replace(email, '[email]')
      .replace(url, (match) => `[url]${/[.,;:!?]+$/.exec(match)?.[0] ?? ''}`)
      .replace(phone, redactPhone);
    if (known.size > 0) {
      out = out.replace(word, (w) => {
        const anyCase = known.get(normalised(w).toLowerCase());
        return anyCase === undefined || !(anyCase || capitalised(w)) ? w : '[name]';
      });
    }
    return out;
  };
}

/**
 * The words of `texts` that could be a respondent's name under the rules above — capitalised words, and lower-case
 * words that are not English — in lower case, as written and capitalised: what to look up among the respondents
 * instead of reading all their names. Three spellings because a database's `lower()` may fold ASCII letters only
 * (the C locale): "ŁUKASZ" in a text still meets "Łukasz" as stored.
 */
export function nameCandidates(texts: Iterable<string>): string[] {
  const seen = new Set<string>();
  const out = new Set<string>();
  // The words of e-mail addresses and URLs are redacted with them, whatever they are.
  const withoutAddresses = redactor([]);
  for (const text of texts) {
    for (const [match] of withoutAddresses(text).matchAll(word)) {
      const w = normalised(match);
      if (seen.has(w)) continue;
      seen.add(w);
      const key = w.toLowerCase();
      if (key.length < 2) continue;
      if (capitalised(w) || !isEnglishWord(key))
        out
          .add(key)
          .add(w)
          .add(key.charAt(0).toUpperCase() + key.slice(1));
    }
  }
  return [...out];
}

/** Whether a text holds a redaction marker. */
export function hasRedaction(text: string): boolean {
  return new RegExp(marker.source).test(text);
}

/** The text with its redaction markers blanked, for reading (the markers are not words of the answer). */
export function withoutRedactionMarkers(text: string): string {
  return text.replace(marker, ' ');
}

/**
 * The quotes that may be shown, the one rule for every provider: each a verbatim excerpt (ends trimmed, at most
 * `maxLength` characters) of one of `sources` — the redacted answers the provider was given, so a remote
 * model's invented quotes are dropped — and redacted once more, so that an excerpt that cuts a word ("Priya"
 * out of "Priyanka…") cannot expose anything either. Duplicates are dropped.
 */
export function quotable(
  candidates: readonly string[],
  sources: readonly string[],
  redact: Redactor,
  maxLength = 500,
): string[] {
  const out: string[] = [];
  for (const candidate of candidates) {
    const quote = candidate.trim();
    if (quote.length === 0 || quote.length > maxLength || !sources.some((s) => s.includes(quote))) continue;
    const safe = redact(quote);
    if (!out.includes(safe)) out.push(safe);
  }
  return out;
}
