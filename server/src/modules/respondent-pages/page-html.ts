/**
 * The respondent's pages, rendered on the server as plain HTML: no script, no external resources, semantic
 * forms (a fieldset and legend per question, labelled inputs, each question's hint, instructions, scale ends and
 * error tied to its fieldset with aria-describedby, errors listed in a summary at the top that names each
 * question), a viewport for phones. Every value is escaped.
 */
import type { Question } from '../../generated/openapi.js';
import { escapeHtml as e, wordsFor, type InterfaceWords } from '../distributions/index.js';
import { liveLogicScript } from './live-logic.js';

export type FormValues = Record<string, string | string[] | undefined>;

// `legend::before` numbers the questions shown (a hidden one takes no number) and gives the number again as the
// alt text after "/": without it Chromium leaves the counter out of the legend's accessible name, so a screen
// reader would say ". How likely…". A browser that does not read that syntax drops the second `content` and keeps
// the first.
const styles = `
*{box-sizing:border-box}
body{margin:0;font:17px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
main{max-width:720px;margin:0 auto;padding:24px 16px 48px;background:#fff;min-height:100vh}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 8px}
.lead{color:#444;margin:0 0 24px}
fieldset{border:1px solid #d0d4da;border-radius:8px;margin:0 0 20px;padding:16px}
fieldset.invalid{border-color:#b3261e;border-width:2px}
legend{font-weight:600;padding:0 6px}
form{counter-reset:question}
legend::before{counter-increment:question;content:counter(question) ". ";content:counter(question) ". " / counter(question) ". "}
fieldset[hidden]{display:none}
.hint{color:#555;font-size:.95rem;margin:0 0 10px}
.req{color:#b3261e}
.error{color:#b3261e;font-weight:600;margin:0 0 10px}
.scale{display:flex;flex-wrap:wrap;gap:6px}
.scale label{display:flex;flex-direction:column;align-items:center;min-width:44px;padding:6px 4px;border:1px solid #c4c8ce;border-radius:6px;cursor:pointer}
.ends{display:flex;justify-content:space-between;gap:12px;color:#555;font-size:.9rem;margin:6px 0 0}
.ends span:last-child{text-align:end}
.option{display:flex;align-items:center;gap:10px;padding:8px 0;min-height:44px}
input[type=radio],input[type=checkbox]{width:22px;height:22px;margin:0}
textarea{width:100%;min-height:120px;font:inherit;padding:10px;border:1px solid #8a9099;border-radius:6px}
input[type=text],input[type=number],input[type=date],select{font:inherit;padding:8px 10px;border:1px solid #8a9099;border-radius:6px;min-height:44px;max-width:100%}
.grid{width:100%;border-collapse:collapse}
.grid th,.grid td{padding:8px 4px;text-align:center;border-bottom:1px solid #e2e5e9}
.grid th[scope=row]{text-align:left;font-weight:400}
.rank{display:flex;align-items:center;gap:10px;margin:0 0 8px}
@media (max-width:560px){.grid thead{display:none}.grid tr{display:block;padding:8px 0;border-bottom:1px solid #e2e5e9}.grid th[scope=row]{display:block;border:0}.grid td{display:inline-flex;flex-direction:column;align-items:center;border:0;min-width:44px}.grid td span{display:block;font-size:.8rem;color:#555}}
@media (min-width:561px){.grid td span{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}}
:focus-visible{outline:3px solid #1f4fd1;outline-offset:2px}
button{font:inherit;font-weight:600;color:#fff;background:#1f4fd1;border:0;border-radius:8px;padding:12px 28px;min-height:48px;cursor:pointer}
.summary{border:2px solid #b3261e;border-radius:8px;padding:12px 16px;margin:0 0 24px}
.summary h2{font-size:1.1rem;margin:0 0 6px}
.summary a{color:#b3261e}
.notice{border-left:4px solid #1f4fd1;padding:8px 14px;background:#eef2fd}
.languages ul{display:flex;flex-wrap:wrap;gap:12px;list-style:none;margin:0 0 16px;padding:0;font-size:.95rem}
.languages a,.languages span{display:inline-block;padding:6px 2px;min-height:44px}
`;

/** A page in `language` (BCP 47): `lang`, and `dir` for the scripts written right to left. */
export function layout(title: string, body: string, language = 'en', script?: string): string {
  return `<!doctype html>
<html lang="${e(language)}" dir="${wordsFor(language).dir}">
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
</main>${script ? `\n<script>${script}</script>` : ''}
</body>
</html>`;
}

export function messagePage(title: string, text: string, language = 'en'): string {
  return layout(title, `<h1>${e(title)}</h1>\n<p class="lead">${e(text)}</p>`, language);
}

const has = (values: FormValues, name: string, value: string) => {
  const v = values[name];
  return Array.isArray(v) ? v.includes(value) : v === value;
};

/** The value of the N/A radio of a question with `allowNotApplicable` (a scale value is a number, never this). */
export const NOT_APPLICABLE = 'na';
/** The form field of a part of a question (a matrix row, a rank, the "Other" text); ids never contain a dot. */
export const partField = (questionId: string, part: string) => `${questionId}.${part}`;

/** The element id of a part of a question's group on the page. */
const partId = (questionId: string, part: 'group' | 'legend' | 'hint' | 'instructions' | 'ends' | 'error') =>
  `${questionId}-${part}`;
const describedBy = (ids: readonly string[]) => (ids.length > 0 ? ` aria-describedby="${ids.map(e).join(' ')}"` : '');

/**
 * The attributes of a question's controls. A text entry is described by the question's hint and error itself:
 * a screen reader reads an edit field's description as it takes focus. An option or a list only says it is
 * invalid: the group's description is read on entering the group, and on every option it would be read again
 * at each step of the arrow keys.
 */
interface Controls {
  entry: string;
  choice: string;
}

/** A question's controls, and the ids of the page's own notes among them (instructions, scale ends). */
interface Body {
  html: string;
  notes: string[];
}

/** The page's own instructions for answering a question, tied to its group by `partId(id, 'instructions')`. */
const instructions = (questionId: string, text: string) =>
  `<p class="hint" id="${e(partId(questionId, 'instructions'))}">${e(text)}</p>`;

function matrixBody(
  q: Extract<Question, { type: 'matrix' }>,
  values: FormValues,
  controls: Controls,
  w: InterfaceWords,
): string {
  const columns: { value: string; label: string }[] = q.scale
    ? Array.from({ length: q.scale.max - q.scale.min + 1 }, (_, k) => {
        const v = q.scale!.min + k;
        const end = v === q.scale!.min ? q.scale!.minLabel : v === q.scale!.max ? q.scale!.maxLabel : null;
        return { value: String(v), label: end ? `${v} (${end})` : String(v) };
      })
    : (q.columns ?? []).map((c) => ({ value: c.id, label: c.label }));
  // N/A: the short form where the grid is narrow, the words for the screen reader.
  const notApplicable = { value: NOT_APPLICABLE, label: w.text('notApplicableShort'), name: w.text('notApplicable') };
  if (q.allowNotApplicable) columns.push(notApplicable);
  const head = `<thead><tr><td></td>${columns.map((c) => `<th scope="col">${e(c.label)}</th>`).join('')}</tr></thead>`;
  const rows = q.rows
    .map((row) => {
      const field = partField(q.id, row.id);
      const cells = columns
        .map((c) => {
          const id = `${field}-${c.value}`;
          return `<td><input type="radio" name="${e(field)}" id="${e(id)}" value="${e(c.value)}" aria-label="${e(`${row.text}: ${'name' in c ? c.name : c.label}`)}"${has(values, field, c.value) ? ' checked' : ''}${controls.choice}><span aria-hidden="true">${e(c.label)}</span></td>`;
        })
        .join('');
      return `<tr><th scope="row">${e(row.text)}</th>${cells}</tr>`;
    })
    .join('');
  return `<table class="grid">${head}<tbody>${rows}</tbody></table>`;
}

function rankingBody(
  q: Extract<Question, { type: 'ranking' }>,
  values: FormValues,
  controls: Controls,
  w: InterfaceWords,
): Body {
  // One list per place, so ranking works by keyboard and without a script; the answer is the places in order.
  const html =
    instructions(q.id, w.text('rankingHint', { count: q.choices.length })) +
    q.choices
      .map((_, k) => {
        const field = partField(q.id, String(k + 1));
        const options = q.choices
          .map((c) => `<option value="${e(c.id)}"${has(values, field, c.id) ? ' selected' : ''}>${e(c.label)}</option>`)
          .join('');
        return `<div class="rank"><label for="${e(field)}">${e(w.count('place', k + 1))}</label><select name="${e(field)}" id="${e(field)}"${controls.choice}><option value="">${e(w.text('chooseItem'))}</option>${options}</select></div>`;
      })
      .join('');
  return { html, notes: [partId(q.id, 'instructions')] };
}

function otherEntry(q: Question, values: FormValues, control: string, controls: Controls, w: InterfaceWords): string {
  if (!('allowOther' in q) || q.allowOther !== true) return '';
  const field = partField(q.id, 'other');
  const text = values[field];
  return `<div class="option">${control}<label for="${e(q.id)}-other">${e(w.text('other'))}</label><input type="text" name="${e(field)}" id="${e(field)}" maxlength="500" aria-label="${e(w.text('otherText'))}" value="${e(typeof text === 'string' ? text : '')}"${controls.entry}></div>`;
}

/** How many choices a multiple-choice question takes, when it bounds them. */
function selectionHint(min: number | null, max: number | null, w: InterfaceWords): string {
  const text =
    min !== null && max !== null
      ? w.text('chooseBetween', { min, max })
      : min !== null
        ? w.text('chooseAtLeast', { min })
        : max !== null
          ? w.text('chooseAtMost', { max })
          : '';
  return text;
}

function questionBody(q: Question, values: FormValues, controls: Controls, w: InterfaceWords): Body {
  const name = e(q.id);
  const radio = (value: string) =>
    `<input type="radio" name="${name}" id="${name}-${e(value)}" value="${e(value)}"${has(values, q.id, value) ? ' checked' : ''}${q.required ? ' required' : ''}${controls.choice}>`;
  const notApplicable =
    'allowNotApplicable' in q && q.allowNotApplicable === true
      ? `<label for="${name}-${NOT_APPLICABLE}">${radio(NOT_APPLICABLE)}<span>${e(w.text('notApplicable'))}</span></label>`
      : '';
  const only = (html: string): Body => ({ html, notes: [] });
  switch (q.type) {
    case 'nps':
    case 'rating': {
      const [min, max] = q.type === 'nps' ? [0, 10] : [q.min, q.max];
      // The author's labels first; NPS has the standard ends in the page's language.
      const low = q.type === 'nps' ? w.text('npsLow') : q.minLabel;
      const high = q.type === 'nps' ? w.text('npsHigh') : q.maxLabel;
      const options = [];
      for (let v = min; v <= max; v++)
        options.push(`<label for="${name}-${v}">${radio(String(v))}<span>${v}</span></label>`);
      const scale = `<div class="scale">${options.join('')}${notApplicable}</div>`;
      if (!low && !high) return only(scale);
      // Each end says its number: on a phone the scale wraps, and the group's description is read without the
      // layout. An end without a label stays, empty, so that the other keeps its side.
      const end = (value: number, label: string | null) => `<span>${label ? e(`${value} = ${label}`) : ''}</span>`;
      const ends = `<p class="ends" id="${e(partId(q.id, 'ends'))}">${end(min, low)}${end(max, high)}</p>`;
      return { html: scale + ends, notes: [partId(q.id, 'ends')] };
    }
    case 'single_choice':
      return only(
        q.choices
          .map((c) => `<div class="option">${radio(c.id)}<label for="${name}-${e(c.id)}">${e(c.label)}</label></div>`)
          .join('') + otherEntry(q, values, radio('other'), controls, w),
      );
    case 'multiple_choice': {
      const hint = selectionHint(q.minSelections, q.maxSelections, w);
      const html =
        (hint ? instructions(q.id, hint) : '') +
        q.choices
          .map(
            (c) =>
              `<div class="option"><input type="checkbox" name="${name}" id="${name}-${e(c.id)}" value="${e(c.id)}"${has(values, q.id, c.id) ? ' checked' : ''}${controls.choice}><label for="${name}-${e(c.id)}">${e(c.label)}</label></div>`,
          )
          .join('') +
        otherEntry(
          q,
          values,
          `<input type="checkbox" name="${name}" id="${name}-other" value="other"${has(values, q.id, 'other') ? ' checked' : ''}${controls.choice}>`,
          controls,
          w,
        );
      return { html, notes: hint ? [partId(q.id, 'instructions')] : [] };
    }
    case 'text': {
      const v = values[q.id];
      return only(
        `<textarea name="${name}" id="${name}" maxlength="${q.maxLength}" aria-labelledby="${e(partId(q.id, 'legend'))}"${q.required ? ' required' : ''}${controls.entry}>${e(typeof v === 'string' ? v : '')}</textarea>`,
      );
    }
    case 'matrix':
      return only(matrixBody(q, values, controls, w));
    case 'ranking':
      return rankingBody(q, values, controls, w);
    case 'number':
    case 'date': {
      const v = values[q.id];
      const bounds = `${q.min !== null ? ` min="${e(String(q.min))}"` : ''}${q.max !== null ? ` max="${e(String(q.max))}"` : ''}`;
      const kind = q.type === 'date' ? 'date' : `number" step="${q.integer ? '1' : 'any'}" inputmode="decimal`;
      return only(
        `<input type="${kind}" name="${name}" id="${name}" aria-labelledby="${e(partId(q.id, 'legend'))}"${bounds}${q.required ? ' required' : ''}${controls.entry} value="${e(typeof v === 'string' ? v : '')}">`,
      );
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

function languageSwitcher(links: readonly LanguageLink[], w: InterfaceWords): string {
  const items = links.map((link) =>
    link.current
      ? `<li><span aria-current="true" lang="${e(link.tag)}">${e(nativeName(link.tag))}</span></li>`
      : `<li><a href="${e(link.href)}" hreflang="${e(link.tag)}" lang="${e(link.tag)}">${e(nativeName(link.tag))}</a></li>`,
  );
  return `<nav class="languages" aria-label="${e(w.text('languages'))}"><ul>${items.join('')}</ul></nav>`;
}

/** The form field that carries `SurveyPage.shown`; a question id cannot contain its dot. */
export const SHOWN_FIELD = 'survey.shown';

export function surveyPage(page: SurveyPage): string {
  const w = wordsFor(page.language);
  const parts: string[] = [];
  if (page.switcher && page.switcher.length > 1) parts.push(languageSwitcher(page.switcher, w));
  parts.push(`<h1>${e(page.title)}</h1>`);
  if (page.description) parts.push(`<p class="lead">${e(page.description)}</p>`);
  if (page.notice) parts.push(`<p class="notice">${e(page.notice)}</p>`);
  if (page.errors.size > 0) {
    // In the order of the questions, each linking to its question's group and naming it: a screen reader's list of
    // links reads them out of context. The group is the target so that arriving there reads its name and its
    // description, which holds the error.
    const items = page.questions
      .filter((q) => page.errors.has(q.id))
      .map(
        (q) =>
          `<li><a href="#${e(partId(q.id, 'group'))}">${e(w.text('errorLink', { question: q.text, message: page.errors.get(q.id)![0]! }))}</a></li>`,
      )
      .join('');
    // Focused as the page loads (no script needed), so a screen reader starts with what to correct.
    parts.push(
      `<div class="summary" role="alert" tabindex="-1" id="errors" autofocus><h2>${e(w.count('problems', page.errors.size))}</h2><ul>${items}</ul></div>`,
    );
  }
  const logic = page.questions.some((q) => q.displayIf);
  // What the page's script needs to apply display logic: each question's id, type and rules (never its texts).
  const logicData = logic
    ? ` data-logic="${e(JSON.stringify(page.questions.map((q) => ({ id: q.id, type: q.type, ...(q.displayIf ? { displayIf: q.displayIf } : {}) }))))}"`
    : '';
  parts.push(`<form method="post" action="${e(page.action)}" novalidate${logicData}>`);
  if (page.shown) parts.push(`<input type="hidden" name="${SHOWN_FIELD}" value="${e(page.shown.join(','))}">`);
  page.questions.forEach((q) => {
    // A question the answers do not call for is on the page, hidden and disabled (so its fields are not sent), for
    // the script to show when they do; without a script the server shows it after a post.
    const hidden = page.shown && !page.shown.includes(q.id) ? ' hidden disabled' : '';
    const errors = page.errors.get(q.id) ?? [];
    const hint = q.description ? partId(q.id, 'hint') : null;
    const error = errors.length > 0 ? partId(q.id, 'error') : null;
    const invalid = error ? ' aria-invalid="true"' : '';
    const body = questionBody(
      q,
      page.values,
      { entry: describedBy([hint, error].filter((id) => id !== null)) + invalid, choice: invalid },
      w,
    );
    // The group is described by everything the page says about the question: read as a screen reader enters it.
    const about = [hint, ...body.notes, error].filter((id) => id !== null);
    parts.push(
      // A group with an error is a link of the summary: it takes the focus.
      `<fieldset id="${e(partId(q.id, 'group'))}"${hidden}${describedBy(about)}${error ? ' tabindex="-1" class="invalid"' : ''}>`,
      `<legend id="${e(partId(q.id, 'legend'))}">${e(q.text)}${q.required ? ` <span class="req">${e(w.text('required'))}</span>` : ` ${e(w.text('optional'))}`}</legend>`,
      hint ? `<p class="hint" id="${e(hint)}">${e(q.description!)}</p>` : '',
      error ? `<p class="error" id="${e(error)}">${errors.map(e).join('<br>')}</p>` : '',
      body.html,
      '</fieldset>',
    );
  });
  parts.push(`<button type="submit">${e(w.text('submit'))}</button>`, '</form>');
  return layout(
    page.errors.size > 0 ? w.text('checkTitle', { title: page.title }) : page.title,
    parts.join('\n'),
    page.language,
    logic ? liveLogicScript : undefined,
  );
}

export function unsubscribePage(action: string, email: string, language = 'en'): string {
  const w = wordsFor(language);
  const title = w.text('unsubscribeTitle');
  return layout(
    title,
    `<h1>${e(title)}</h1>
<p class="lead">${w.html('unsubscribeQuestion', { email: { html: `<strong>${e(email)}</strong>` } })}</p>
<form method="post" action="${e(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">${e(w.text('unsubscribeButton'))}</button></form>`,
    language,
  );
}
