/**
 * The respondent's pages, rendered on the server as plain HTML: no script, no external resources, semantic
 * forms (a fieldset and legend per question, labelled inputs, errors tied to their inputs with
 * aria-describedby and listed in a summary at the top), a viewport for phones. Every value is escaped.
 */
import type { components } from '../../generated/openapi.js';
import { escapeHtml as e } from './messages.js';

type Question = components['schemas']['Question'];

export type FormValues = Record<string, string | string[] | undefined>;

const styles = `
*{box-sizing:border-box}
body{margin:0;font:17px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
main{max-width:720px;margin:0 auto;padding:24px 16px 48px;background:#fff;min-height:100vh}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 8px}
.lead{color:#444;margin:0 0 24px}
fieldset{border:1px solid #d0d4da;border-radius:8px;margin:0 0 20px;padding:16px}
fieldset.invalid{border-color:#b3261e;border-width:2px}
legend{font-weight:600;padding:0 6px}
.hint{color:#555;font-size:.95rem;margin:0 0 10px}
.req{color:#b3261e}
.error{color:#b3261e;font-weight:600;margin:0 0 10px}
.scale{display:flex;flex-wrap:wrap;gap:6px}
.scale label{display:flex;flex-direction:column;align-items:center;min-width:44px;padding:6px 4px;border:1px solid #c4c8ce;border-radius:6px;cursor:pointer}
.ends{display:flex;justify-content:space-between;color:#555;font-size:.9rem;margin-top:6px}
.option{display:flex;align-items:center;gap:10px;padding:8px 0;min-height:44px}
input[type=radio],input[type=checkbox]{width:22px;height:22px;margin:0}
textarea{width:100%;min-height:120px;font:inherit;padding:10px;border:1px solid #8a9099;border-radius:6px}
:focus-visible{outline:3px solid #1f4fd1;outline-offset:2px}
button{font:inherit;font-weight:600;color:#fff;background:#1f4fd1;border:0;border-radius:8px;padding:12px 28px;min-height:48px;cursor:pointer}
.summary{border:2px solid #b3261e;border-radius:8px;padding:12px 16px;margin:0 0 24px}
.summary h2{font-size:1.1rem;margin:0 0 6px}
.summary a{color:#b3261e}
.notice{border-left:4px solid #1f4fd1;padding:8px 14px;background:#eef2fd}
.languages ul{display:flex;flex-wrap:wrap;gap:12px;list-style:none;margin:0 0 16px;padding:0;font-size:.95rem}
.languages a,.languages span{display:inline-block;padding:6px 2px;min-height:44px}
`;

export function layout(title: string, body: string, language = 'en'): string {
  return `<!doctype html>
<html lang="${e(language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(title)}</title>
<style>${styles}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export function messagePage(title: string, text: string): string {
  return layout(title, `<h1>${e(title)}</h1>\n<p class="lead">${e(text)}</p>`);
}

const has = (values: FormValues, name: string, value: string) => {
  const v = values[name];
  return Array.isArray(v) ? v.includes(value) : v === value;
};

function questionBody(q: Question, values: FormValues, describedBy: string): string {
  const name = e(q.id);
  const radio = (value: string, label: string, extra = '') =>
    `<input type="radio" name="${name}" id="${name}-${e(value)}" value="${e(value)}"${has(values, q.id, value) ? ' checked' : ''}${q.required ? ' required' : ''}${describedBy}${extra}>`;
  switch (q.type) {
    case 'nps':
    case 'rating': {
      const [min, max] = q.type === 'nps' ? [0, 10] : [q.min, q.max];
      const low = q.type === 'nps' ? 'Not at all likely' : q.minLabel;
      const high = q.type === 'nps' ? 'Extremely likely' : q.maxLabel;
      const options = [];
      for (let v = min; v <= max; v++)
        options.push(`<label for="${name}-${v}">${radio(String(v), String(v))}<span>${v}</span></label>`);
      const ends =
        low || high
          ? `<div class="ends" aria-hidden="true"><span>${e(low ?? '')}</span><span>${e(high ?? '')}</span></div>`
          : '';
      const scaleHint =
        low || high ? `<p class="hint">${min} = ${e(low ?? String(min))}, ${max} = ${e(high ?? String(max))}</p>` : '';
      return `${scaleHint}<div class="scale">${options.join('')}</div>${ends}`;
    }
    case 'single_choice':
      return q.choices
        .map(
          (c) =>
            `<div class="option">${radio(c.id, c.label)}<label for="${name}-${e(c.id)}">${e(c.label)}</label></div>`,
        )
        .join('');
    case 'multiple_choice': {
      const bounds = [
        q.minSelections !== null ? `at least ${q.minSelections}` : '',
        q.maxSelections !== null ? `at most ${q.maxSelections}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      const hint = bounds ? `<p class="hint">Choose ${bounds}.</p>` : '';
      return (
        hint +
        q.choices
          .map(
            (c) =>
              `<div class="option"><input type="checkbox" name="${name}" id="${name}-${e(c.id)}" value="${e(c.id)}"${has(values, q.id, c.id) ? ' checked' : ''}${describedBy}><label for="${name}-${e(c.id)}">${e(c.label)}</label></div>`,
          )
          .join('')
      );
    }
    case 'text': {
      const v = values[q.id];
      return `<textarea name="${name}" id="${name}" maxlength="${q.maxLength}" aria-labelledby="${name}-legend"${q.required ? ' required' : ''}${describedBy}>${e(typeof v === 'string' ? v : '')}</textarea>`;
    }
  }
}

export interface SurveyPage {
  title: string;
  description: string | null;
  questions: readonly Question[];
  action: string;
  values: FormValues;
  errors: Map<string, string[]>;
  notice?: string;
  /** The ids of the questions this page shows (display logic): the next post says whether its answers change them. */
  shown?: readonly string[];
  /** The language of the page's survey strings (BCP 47). */
  language?: string;
  /** One link per language of the survey, when it has several: a switcher that needs no script. */
  switcher?: readonly LanguageLink[];
}

export interface LanguageLink {
  tag: string;
  href: string;
  current: boolean;
}

/** A language's name in that language ("Deutsch"), for the switcher; the tag when the runtime does not know it. */
function nativeName(tag: string): string {
  try {
    return new Intl.DisplayNames([tag], { type: 'language' }).of(tag) ?? tag;
  } catch {
    return tag;
  }
}

function languageSwitcher(links: readonly LanguageLink[]): string {
  const items = links.map((link) =>
    link.current
      ? `<li><span aria-current="true" lang="${e(link.tag)}">${e(nativeName(link.tag))}</span></li>`
      : `<li><a href="${e(link.href)}" hreflang="${e(link.tag)}" lang="${e(link.tag)}">${e(nativeName(link.tag))}</a></li>`,
  );
  return `<nav class="languages" aria-label="Language"><ul>${items.join('')}</ul></nav>`;
}

/** The form field that carries `SurveyPage.shown`; a question id cannot contain its dot. */
export const SHOWN_FIELD = 'survey.shown';

export function surveyPage(page: SurveyPage): string {
  const parts: string[] = [];
  if (page.switcher && page.switcher.length > 1) parts.push(languageSwitcher(page.switcher));
  parts.push(`<h1>${e(page.title)}</h1>`);
  if (page.description) parts.push(`<p class="lead">${e(page.description)}</p>`);
  if (page.notice) parts.push(`<p class="notice">${e(page.notice)}</p>`);
  if (page.errors.size > 0) {
    // In the order of the questions, each linking to its question.
    const ordered = page.questions
      .filter((q) => page.errors.has(q.id))
      .map((q) => [q.id, page.errors.get(q.id)!] as const);
    const items = ordered
      .map(([id, messages]) => `<li><a href="#${e(id)}-legend">${e(messages[0]!)}</a></li>`)
      .join('');
    parts.push(
      `<div class="summary" role="alert" tabindex="-1" id="errors"><h2>There ${page.errors.size === 1 ? 'is 1 problem' : `are ${page.errors.size} problems`} with your answers</h2><ul>${items}</ul></div>`,
    );
  }
  parts.push(`<form method="post" action="${e(page.action)}" novalidate>`);
  if (page.shown) parts.push(`<input type="hidden" name="${SHOWN_FIELD}" value="${e(page.shown.join(','))}">`);
  page.questions.forEach((q, i) => {
    const errors = page.errors.get(q.id) ?? [];
    const ids = [q.description ? `${q.id}-hint` : '', errors.length > 0 ? `${q.id}-error` : '']
      .filter(Boolean)
      .map(e)
      .join(' ');
    const describedBy = ids ? ` aria-describedby="${ids}"` : '';
    const invalid = errors.length > 0 ? ' aria-invalid="true"' : '';
    parts.push(
      `<fieldset id="${e(q.id)}-group"${errors.length > 0 ? ' class="invalid"' : ''}>`,
      `<legend id="${e(q.id)}-legend" tabindex="-1">${i + 1}. ${e(q.text)}${q.required ? ' <span class="req">(required)</span>' : ' (optional)'}</legend>`,
      q.description ? `<p class="hint" id="${e(q.id)}-hint">${e(q.description)}</p>` : '',
      errors.length > 0 ? `<p class="error" id="${e(q.id)}-error">${errors.map(e).join('<br>')}</p>` : '',
      questionBody(q, page.values, describedBy + invalid),
      '</fieldset>',
    );
  });
  parts.push('<button type="submit">Submit my answers</button>', '</form>');
  return layout(
    page.errors.size > 0 ? `Check your answers – ${page.title}` : page.title,
    parts.join('\n'),
    page.language,
  );
}

export function unsubscribePage(action: string, email: string): string {
  return layout(
    'Unsubscribe',
    `<h1>Unsubscribe</h1>
<p class="lead">Stop survey e-mails from this organization to <strong>${e(email)}</strong>?</p>
<form method="post" action="${e(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );
}
