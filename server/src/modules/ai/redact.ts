/**
 * Redaction before any text leaves the process for a remote provider: e-mail addresses, phone numbers, URLs
 * and the names of the organization's respondents become `[email]`, `[phone]`, `[url]` and `[name]`. Names
 * are matched as whole, capitalised words (so "Will" the name goes, "will" the verb stays), case-insensitively
 * on the rest of the word.
 */
const email = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const url = /\b(?:https?:\/\/|www\.)[^\s<>"')\]]+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|co|gov|edu|info|app)(?:\/[^\s<>"')\]]*)?/gi;
// Seven or more digits, with the usual separators and an optional leading + or (area code).
const phone = /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d(?:[\s.-]?\d){6,14}\b/g;

export interface Redactor {
  (text: string): string;
}

export function redactor(names: readonly string[]): Redactor {
  const known = new Set<string>();
  for (const name of names) {
    for (const part of name.split(/[\s-]+/)) if (part.length >= 2) known.add(part.toLowerCase());
  }
  return (text: string) => {
    let out = text.replace(email, '[email]').replace(url, (match) => `[url]${/[.,;:!?]+$/.exec(match)?.[0] ?? ''}`).replace(phone, '[phone]');
    if (known.size > 0) {
      out = out.replace(/\p{Lu}[\p{L}'’]*/gu, (word) => (known.has(word.replace(/['’]s$/, '').toLowerCase()) ? '[name]' : word));
    }
    return out;
  };
}
