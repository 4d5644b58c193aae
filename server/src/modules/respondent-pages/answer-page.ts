/**
 * The respondent's side, outside `/api/v1` and without API keys: `GET|POST /s/{token}` (the answer page, for
 * personal and embed tokens) and `GET|POST /u/{token}` (unsubscribe; the POST is RFC 8058 one-click). Answers
 * are checked by the same function as `submitResponse` (surveys/answers.ts) and stored as a response linked
 * to the respondent and the distribution. Every failure is a plain page: an unknown token looks the same
 * whether or not it exists elsewhere, and no error ever shows internals.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Answer, Question } from '../../generated/openapi.js';
import type { Dependencies } from '../../dependencies.js';
import { databaseUnavailable } from '../../db/availability.js';
import { unavailableRetryAfterSeconds } from '../../http/index.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { displayedQuestions, validateAnswers } from '../surveys/index.js';
import * as surveys from '../surveys/index.js';
import { storeResponse } from '../surveys/index.js';
import type { SurveyRow } from '../surveys/index.js';
import {
  messagePage,
  NOT_APPLICABLE,
  partField,
  SHOWN_FIELD,
  surveyPage,
  unsubscribePage,
  type FormValues,
  type LanguageLink,
} from './page-html.js';
import {
  answerUrl,
  interfaceLanguageOf,
  isUnsubscribed,
  openLink,
  unsubscribe,
  wordsFor,
  type InterfaceWords,
  type LinkTarget,
  type Params,
  type TextKey,
} from '../distributions/index.js';
import { spendEmbedAnswer } from './embed-limits.js';
import { readForm } from './form-body.js';
import { liveLogicHash } from './live-logic.js';
import { sendQrCode } from './qr-code.js';

/** What a token opens (distributions' `openLink`), with its survey. */
type Resolved = (LinkTarget & { survey: SurveyRow }) | { kind: 'unknown' };

const EMBED_COOKIE = 'ss_answered';

/**
 * `frameableBy`: the origins that may frame this page (a distribution's `embedOrigins`, contract-checked to be
 * bare origins, so they cannot break out of the header). None: no site may, so no page can be overlaid to trick
 * a respondent into answering or unsubscribing (clickjacking).
 */
export function sendPage(res: Response, status: number, html: string, frameableBy: readonly string[] = []): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  setPageHeaders(res, frameableBy);
  res.send(html);
}

/** The headers of every respondent page, whoever sends it. */
function setPageHeaders(res: Response, frameableBy: readonly string[]): void {
  res.setHeader('Cache-Control', 'no-store');
  // The token is in the URL: it must never leak to another site through Referer.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  const ancestors = frameableBy.length > 0 ? frameableBy.join(' ') : "'none'";
  // Nothing but inline styles, the page's one script (display logic), and same-origin form posts.
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'unsafe-inline'; script-src ${liveLogicHash}; form-action 'self'; base-uri 'none'; frame-ancestors ${ancestors}`,
  );
  // X-Frame-Options cannot name several origins; browsers that know CSP ignore it when frame-ancestors is set.
  if (frameableBy.length === 0) res.setHeader('X-Frame-Options', 'DENY');
}

/** Only an embed distribution's pages (its shared token, or a personal link of it) may be framed, by its origins. */
const frameableBy = (found: Resolved): readonly string[] =>
  found.kind !== 'unknown' && found.distribution.method === 'embed' ? found.distribution.embed_origins : [];

/** A page of a title and a sentence, in the words of `language`. */
const notice = (language: string, title: TextKey, text: TextKey, params?: Params) => {
  const w = wordsFor(language);
  return messagePage(w.text(title), w.text(text, params), language);
};

const pages = {
  unknown: (language: string) => notice(language, 'unknownTitle', 'unknownText'),
  used: (language: string) => notice(language, 'thanks', 'usedText'),
  expired: (language: string) => notice(language, 'expiredTitle', 'expiredText'),
  unsubscribed: (language: string) => notice(language, 'unsubscribedTitle', 'unsubscribedText'),
  closed: (language: string) => notice(language, 'closedTitle', 'closedText'),
  embedDone: (language: string) => notice(language, 'thanks', 'embedDoneText'),
  tooLarge: (language: string) => notice(language, 'tooLargeTitle', 'tooLargeText'),
  unsupported: (language: string) => notice(language, 'unsupportedTitle', 'unsupportedText'),
  busy: (language: string) => notice(language, 'busyTitle', 'busyText'),
  unavailable: (language: string) => notice(language, 'unavailableTitle', 'unavailableText'),
  error: (language: string, requestId: string) => notice(language, 'errorTitle', 'errorText', { reference: requestId }),
};

/** The language of a page that knows no survey (an unknown link, a refused form): the browser's, if we have it. */
const browserLanguage = (req: Request) => interfaceLanguageOf(surveys.acceptedLanguages(req.get('accept-language')));

async function resolve(deps: Dependencies, token: string): Promise<Resolved> {
  const link = await openLink(deps.db, token);
  if (!link) return { kind: 'unknown' };
  const survey = await surveys.findSurvey(deps.db, link.tenant, link.distribution.survey_id);
  if (!survey) return { kind: 'unknown' };
  return { ...link, survey };
}

function answeredCookie(req: Request): string[] {
  const header = req.get('cookie') ?? '';
  const match = header.split(/;\s*/).find((c) => c.startsWith(`${EMBED_COOKIE}=`));
  return match
    ? decodeURIComponent(match.slice(EMBED_COOKIE.length + 1))
        .split('.')
        .filter(Boolean)
    : [];
}

/** Why this token cannot answer now, as the page to show; undefined when it can. */
async function refusal(
  deps: Dependencies,
  req: Request,
  found: Exclude<Resolved, { kind: 'unknown' }>,
): Promise<[number, string] | undefined> {
  const language = pageLanguage(req, found);
  if (found.kind === 'personal' && found.recipient.status === 'responded') return [410, pages.used(language)];
  if (found.kind === 'embed' && answeredCookie(req).includes(found.distribution.id))
    return [200, pages.embedDone(language)];
  if (!found.distribution.expires_at || found.distribution.expires_at.getTime() <= Date.now())
    return [410, pages.expired(language)];
  if (found.kind === 'personal' && (await isUnsubscribed(deps.db, found.tenant, found.recipient.email)))
    return [410, pages.unsubscribed(language)];
  if (found.survey.status !== 'active') return [409, pages.closed(language)];
  return undefined;
}

/** The query parameter of the language switcher (`/s/{token}?lang=de`); the page's form posts it back. */
const LANGUAGE_PARAM = 'lang';

/**
 * The language of a survey's pages: the switcher's choice, else the recipient's language, else the browser's
 * (`Accept-Language`), else the survey's default.
 */
function pageLanguage(req: Request, found: Exclude<Resolved, { kind: 'unknown' }>): string {
  const { languages } = found.survey;
  const chosen = typeof req.query[LANGUAGE_PARAM] === 'string' ? req.query[LANGUAGE_PARAM] : undefined;
  return surveys.chooseLanguage(languages, [
    chosen && surveys.listedLanguage(languages, chosen),
    found.kind === 'personal' ? found.recipient.language : null,
    ...surveys.acceptedLanguages(req.get('accept-language')),
  ]);
}

/**
 * The survey in the page's language (`pageLanguage`), with the links of the switcher and the form's action, which
 * keeps the language for the next post. The service's own words on the page follow the same language.
 */
async function inLanguage(deps: Dependencies, req: Request, found: Exclude<Resolved, { kind: 'unknown' }>) {
  const { languages } = found.survey;
  const language = pageLanguage(req, found);
  const translation = await surveys.findTranslationContent(deps.db, found.tenant, found.survey, language);
  const base = `/s/${String(req.params.token)}`;
  const withLanguage = (tag: string) =>
    languages.length > 1 ? `${base}?${LANGUAGE_PARAM}=${encodeURIComponent(tag)}` : base;
  const switcher: LanguageLink[] =
    languages.length > 1 ? languages.map((tag) => ({ tag, href: withLanguage(tag), current: tag === language })) : [];
  return {
    survey: surveys.localizeSurvey(found.survey, translation),
    language,
    switcher,
    action: withLanguage(language),
  };
}

/** The page's questions, and the ids of those these answers show (display logic), for the form to carry. */
function shownFor(questions: readonly Question[], answers: readonly Answer[]) {
  const shown = displayedQuestions(questions, new Map(answers.map((a) => [a.questionId, a.value])));
  return { questions, shown: questions.filter((q) => shown.has(q.id)).map((q) => q.id) };
}

const filled = (form: FormValues, field: string) => {
  const raw = form[field];
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v) => v !== '');
};
/** A scale's field: a number when it reads as one, N/A as null, anything else as sent (the checks refuse it). */
const scaleValue = (text: string) => (text === NOT_APPLICABLE ? null : /^-?\d{1,6}$/.test(text) ? Number(text) : text);

/**
 * Form fields to answers: numbers for scales and number questions, arrays for multiple choice and rankings (the
 * items chosen for the places, in order), an object of rows for a matrix; empty fields are unanswered.
 */
export function answersFromForm(questions: readonly Question[], form: FormValues): Answer[] {
  const answers: Answer[] = [];
  for (const q of questions) {
    const other = filled(form, partField(q.id, 'other'))[0];
    const withOther = (answer: Answer) => answers.push(other !== undefined ? { ...answer, other } : answer);
    if (q.type === 'matrix') {
      const cells = q.rows.flatMap((row) => {
        const [cell] = filled(form, partField(q.id, row.id));
        return cell === undefined ? [] : [[row.id, q.scale ? scaleValue(cell) : cell === NOT_APPLICABLE ? null : cell]];
      });
      if (cells.length > 0) answers.push({ questionId: q.id, value: Object.fromEntries(cells) as Answer['value'] });
      continue;
    }
    if (q.type === 'ranking') {
      const places = q.choices.map((_, k) => filled(form, partField(q.id, String(k + 1)))[0]);
      if (places.some((p) => p !== undefined))
        answers.push({ questionId: q.id, value: places.filter((p): p is string => p !== undefined) });
      continue;
    }
    const values = filled(form, q.id);
    if (values.length === 0) {
      // Text in "Other" without its box ticked still says which answer was meant.
      if (other !== undefined && (q.type === 'single_choice' || q.type === 'multiple_choice'))
        withOther({ questionId: q.id, value: q.type === 'single_choice' ? 'other' : ['other'] });
      continue;
    }
    if (q.type === 'multiple_choice') withOther({ questionId: q.id, value: values });
    else if (q.type === 'single_choice') withOther({ questionId: q.id, value: values[0]! });
    else if (q.type === 'nps' || q.type === 'rating') answers.push({ questionId: q.id, value: scaleValue(values[0]!) });
    else if (q.type === 'number')
      answers.push({
        questionId: q.id,
        value: /^-?\d{1,13}(\.\d{1,10})?$/.test(values[0]!.trim()) ? Number(values[0]!.trim()) : values[0]!,
      });
    else answers.push({ questionId: q.id, value: values[0]! });
  }
  return answers;
}

/** The shared rules' problems, placed next to their question and said for a person rather than a program. */
export function problemsByQuestion(
  questions: readonly Question[],
  answers: readonly Answer[],
  w: InterfaceWords = wordsFor('en'),
): Map<string, string[]> {
  const byQuestion = new Map<string, string[]>();
  const add = (id: string, message: string) => byQuestion.set(id, [...(byQuestion.get(id) ?? []), message]);
  // "Enter a number. It must be from 1 to 10."
  const range = (min: string | null, max: string | null, keys: readonly [TextKey, TextKey, TextKey]) =>
    min !== null && max !== null
      ? w.text(keys[0], { min, max })
      : min !== null
        ? w.text(keys[1], { min })
        : max !== null
          ? w.text(keys[2], { max })
          : '';
  const number = (value: number | null) => (value === null ? null : w.number(value));
  for (const problem of validateAnswers(questions, answers, '/answers')) {
    const index = /^\/answers\/(\d+)/.exec(problem.path ?? '');
    const id = index ? answers[Number(index[1])]?.questionId : /question (\S+) is required/.exec(problem.message)?.[1];
    const q = questions.find((x) => x.id === id);
    if (!q) continue;
    if (!index) add(q.id, w.text('answerRequired'));
    else if (/\/other$/.test(problem.path ?? '')) add(q.id, w.text('otherMissing'));
    else if (q.type === 'nps') add(q.id, w.text('chooseNumber', { min: 0, max: 10 }));
    else if (q.type === 'rating') add(q.id, w.text('chooseNumber', { min: q.min, max: q.max }));
    else if (q.type === 'single_choice') add(q.id, w.text('chooseOption'));
    else if (q.type === 'multiple_choice' && problem.code === 'out_of_range') {
      // Too few or too many: told by the count chosen, not by the wording of the rule's message.
      const chosen = answers[Number(index[1])]?.value;
      const count = Array.isArray(chosen) ? chosen.length : 0;
      if (q.minSelections !== null && count < q.minSelections)
        add(q.id, w.text('chooseAtLeast', { min: q.minSelections }));
      else add(q.id, w.text('chooseAtMost', { max: q.maxSelections ?? 0 }));
    } else if (q.type === 'multiple_choice') add(q.id, w.text('chooseFromOptions'));
    else if (q.type === 'text') add(q.id, w.text('tooLong', { max: q.maxLength }));
    else if (q.type === 'matrix') add(q.id, w.text('matrixRows'));
    else if (q.type === 'ranking') add(q.id, w.text('rankingPlaces'));
    else if (q.type === 'number') {
      const bounds = range(number(q.min), number(q.max), ['numberBetween', 'numberAtLeast', 'numberAtMost']);
      add(q.id, [w.text(q.integer ? 'enterWholeNumber' : 'enterNumber'), bounds].filter(Boolean).join(' '));
    } else if (q.type === 'date') {
      const date = (value: string | null) => (value === null ? null : w.date(value));
      add(q.id, range(date(q.min), date(q.max), ['dateBetween', 'dateFrom', 'dateUntil']) || w.text('enterDate'));
    }
  }
  return byQuestion;
}

/**
 * Stores the answer through the one response writer (surveys' `storeResponse`): the response, the recipient's
 * `responded`, the count and `response.submitted` in one statement; a personal link answers once.
 */
async function store(
  deps: Dependencies,
  found: Exclude<Resolved, { kind: 'unknown' }>,
  answers: Answer[],
  language: string,
): Promise<'stored' | 'used' | 'closed'> {
  const { tenant, survey, distribution } = found;
  const { anonymous, allowMultipleResponses } = survey.settings;
  const externalId = found.kind === 'personal' ? found.recipient.external_id : null;
  const respondentExternalId = anonymous ? null : externalId;
  const identityShown = surveys.showsIdentity(survey.settings);
  const submittedAt = new Date();
  const id = newId('rsp');
  // The event's view: a confidential survey stores its respondent but never shows it.
  const response = {
    id,
    surveyId: survey.id,
    respondentExternalId: identityShown ? respondentExternalId : null,
    answers,
    submittedAt: iso(submittedAt),
    distributionId: distribution.id,
    language,
  };
  const stored = await storeResponse(
    deps.db,
    tenant,
    {
      id,
      surveyId: survey.id,
      respondentExternalId,
      dedupeKey: allowMultipleResponses ? null : respondentExternalId,
      answers,
      submittedAt,
      language,
      identityShown,
    },
    { id: newId('evt'), type: 'response.submitted', data: response },
    found.kind === 'personal'
      ? { kind: 'personal', distributionId: distribution.id, tokenHash: found.tokenHash }
      : { kind: 'embed', distributionId: distribution.id },
  );
  if (stored.outcome === 'stored') return 'stored';
  // Already answered, through this link or through the API (one response per respondent).
  return stored.outcome === 'inactive' ? 'closed' : 'used';
}

export function answerPages(deps: Dependencies): Router {
  const router = express.Router();
  // Refused before the token is looked up, so no distribution's origins apply: not frameable.
  const form = readForm((res, status) => {
    setPageHeaders(res, []);
    const language = browserLanguage(res.req);
    return status === 413 ? pages.tooLarge(language) : pages.unsupported(language);
  });
  const secure = (req: Request) => req.protocol === 'https' || (deps.config.publicBaseUrl ?? '').startsWith('https:');

  const guarded = (handler: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await handler(req, res);
    } catch (error) {
      if (databaseUnavailable(error)) {
        // The database is away for a moment (logged once by the pools): nothing was stored, the respondent retries.
        if (!res.headersSent) {
          res.setHeader('Retry-After', unavailableRetryAfterSeconds);
          sendPage(res, 503, pages.unavailable(browserLanguage(req)));
        }
        return;
      }
      deps.log.error({ err: error, requestId: res.locals.requestId }, 'answer page failed');
      if (!res.headersSent) sendPage(res, 500, pages.error(browserLanguage(req), String(res.locals.requestId ?? '')));
    }
  };

  const load = (req: Request) => resolve(deps, String(req.params.token));

  router.get(
    '/s/:token',
    guarded(async (req, res) => {
      const found = await load(req);
      if (found.kind === 'unknown') return sendPage(res, 404, pages.unknown(browserLanguage(req)));
      const framing = frameableBy(found);
      const refused = await refusal(deps, req, found);
      if (refused) return sendPage(res, refused[0], refused[1], framing);
      const { survey, language, switcher, action } = await inLanguage(deps, req, found);
      sendPage(
        res,
        200,
        surveyPage({
          title: survey.title,
          description: survey.description,
          ...shownFor(survey.questions, []),
          action,
          values: {},
          errors: new Map(),
          language,
          switcher,
        }),
        framing,
      );
    }),
  );

  // The link as a QR code (qr-code.ts), refused exactly as the page would be.
  router.get(
    '/s/:token/qr.svg',
    guarded(async (req, res) => {
      const found = await load(req);
      if (found.kind === 'unknown') return sendPage(res, 404, pages.unknown(browserLanguage(req)));
      const refused = await refusal(deps, req, found);
      if (refused) return sendPage(res, refused[0], refused[1], frameableBy(found));
      await sendQrCode(res, answerUrl(deps.config, String(req.params.token)));
    }),
  );

  router.post(
    '/s/:token',
    form,
    guarded(async (req, res) => {
      const found = await load(req);
      if (found.kind === 'unknown') return sendPage(res, 404, pages.unknown(browserLanguage(req)));
      const framing = frameableBy(found);
      const refused = await refusal(deps, req, found);
      if (refused) return sendPage(res, refused[0], refused[1], framing);
      const values = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as FormValues;
      const { survey, language, switcher, action } = await inLanguage(deps, req, found);
      const w = wordsFor(language);
      const given = answersFromForm(survey.questions, values);
      const page = shownFor(survey.questions, given);
      // Answers to questions these answers do not show are dropped, as if their fields had been hidden.
      const answers = given.filter((answer) => page.shown.includes(answer.questionId));
      const pageFor = (errors: Map<string, string[]>, notice?: string) =>
        surveyPage({
          title: survey.title,
          description: survey.description,
          ...page,
          action,
          values,
          errors,
          notice,
          language,
          switcher,
        });
      // The answers show other questions than the page did: show those first (the page without scripts works
      // this way; with its script, the questions appear and disappear as the answers change).
      if (typeof values[SHOWN_FIELD] === 'string' && values[SHOWN_FIELD] !== page.shown.join(',')) {
        return sendPage(res, 200, pageFor(new Map(), w.text('logicChanged')), framing);
      }
      const errors = problemsByQuestion(survey.questions, answers, w);
      if (answers.length === 0 && errors.size === 0)
        errors.set(page.questions[0]?.id ?? '', [w.text('answerSomething')]);
      if (errors.size > 0) return sendPage(res, 400, pageFor(errors), framing);
      if (found.kind === 'embed') {
        const spent = await spendEmbedAnswer(
          deps.db,
          found.distribution.id,
          req.ip ?? req.socket.remoteAddress ?? 'unknown',
        );
        if (!spent.ok) {
          res.setHeader('Retry-After', String(spent.retryAfterSeconds));
          return sendPage(res, 429, pages.busy(language), framing);
        }
      }
      const outcome = await store(deps, found, answers, language);
      if (outcome === 'closed') return sendPage(res, 409, pages.closed(language), framing);
      if (outcome === 'used') return sendPage(res, 410, pages.used(language), framing);
      if (found.kind === 'embed') {
        const ids = [...new Set([...answeredCookie(req), found.distribution.id])].slice(-20).join('.');
        const attributes = secure(req) ? 'SameSite=None; Secure' : 'SameSite=Lax';
        res.setHeader(
          'Set-Cookie',
          `${EMBED_COOKIE}=${encodeURIComponent(ids)}; Path=/s/; Max-Age=${365 * 86400}; HttpOnly; ${attributes}`,
        );
        return sendPage(res, 200, pages.embedDone(language), framing);
      }
      sendPage(res, 200, pages.used(language), framing);
    }),
  );

  router.get(
    '/u/:token',
    guarded(async (req, res) => {
      const found = await load(req);
      // A person without an address has nothing to unsubscribe.
      if (found.kind !== 'personal' || found.recipient.email === null)
        return sendPage(res, 404, pages.unknown(browserLanguage(req)));
      const language = pageLanguage(req, found);
      if (await isUnsubscribed(deps.db, found.tenant, found.recipient.email))
        return sendPage(res, 200, pages.unsubscribed(language));
      sendPage(res, 200, unsubscribePage(`/u/${req.params.token}`, found.recipient.email, language));
    }),
  );

  // RFC 8058: a POST with `List-Unsubscribe=One-Click` unsubscribes without any further step.
  router.post(
    '/u/:token',
    form,
    guarded(async (req, res) => {
      const found = await load(req);
      if (found.kind !== 'personal' || found.recipient.email === null)
        return sendPage(res, 404, pages.unknown(browserLanguage(req)));
      await unsubscribe(deps.db, found.tenant, found.recipient.email, found.distribution.id);
      sendPage(res, 200, pages.unsubscribed(pageLanguage(req, found)));
    }),
  );

  return router;
}
