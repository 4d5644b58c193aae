/**
 * `GET|POST /k`: the kiosk page, where a person without e-mail types the access code from their card on a shared
 * screen and is sent on to their own answer page (`303` to `/s/{token}`). Distributions' kiosk.ts (`openByCode`)
 * decides where a code leads and counts the tries; this file is the page.
 *
 * Plain HTML like the answer page, and under the same headers (its CSP, no framing, no caching, no referrer): one
 * labelled field with its hint, the error tied to the field, works without a script. The field is focused when the
 * page opens (at a kiosk the next person starts typing) and never autofilled, so the browser does not offer the
 * previous person's code. The page speaks the browser's language when it has the words for it.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Dependencies } from '../../dependencies.js';
import { databaseUnavailable } from '../../db/availability.js';
import { unavailableRetryAfterSeconds } from '../../http/index.js';
import * as surveys from '../surveys/index.js';
import { escapeHtml as e, interfaceLanguageOf, openByCode, wordsFor, type TextKey } from '../distributions/index.js';
import { sendPage } from './answer-page.js';
import { readForm } from './form-body.js';
import { layout, messagePage } from './page-html.js';

/** The form's one field. */
export const CODE_FIELD = 'code';
const EXAMPLE = 'K7QM-4XRT-9PZ3';

const en = {
  title: 'Open your survey',
  intro: 'Type the access code from your invitation to open your survey.',
  label: 'Access code',
  hint: '12 letters and digits, for example {example}. Capitals, spaces and dashes do not matter.',
  button: 'Open my survey',
  checkTitle: 'Check your access code',
  missing: 'Enter your access code.',
  malformed: 'An access code has 12 letters and digits, such as {example}. Check what you typed.',
  wrong: 'This code was not found. Compare it with your invitation and try again.',
  usedTitle: 'This code has been used',
  usedText: 'An answer has already been recorded with this code. Each code opens the survey once.',
  busyTitle: 'Too many tries',
  busyText: 'Too many codes were tried just now. Please wait a minute, then try again.',
  enter: 'Enter a code',
};

type KioskWords = Record<keyof typeof en, string>;

/**
 * The kiosk's words in the answer page's interface languages (distributions' interface-words.ts), in the same
 * register.
 */
const catalogues: Readonly<Record<string, KioskWords>> = {
  en,
  de: {
    title: 'Umfrage öffnen',
    intro: 'Geben Sie den Zugangscode von Ihrer Einladung ein, um Ihre Umfrage zu öffnen.',
    label: 'Zugangscode',
    hint: '12 Buchstaben und Ziffern, zum Beispiel {example}. Groß- und Kleinschreibung, Leerzeichen und Bindestriche spielen keine Rolle.',
    button: 'Meine Umfrage öffnen',
    checkTitle: 'Zugangscode prüfen',
    missing: 'Geben Sie Ihren Zugangscode ein.',
    malformed: 'Ein Zugangscode hat 12 Buchstaben und Ziffern, zum Beispiel {example}. Prüfen Sie Ihre Eingabe.',
    wrong: 'Dieser Code wurde nicht gefunden. Vergleichen Sie ihn mit Ihrer Einladung und versuchen Sie es erneut.',
    usedTitle: 'Dieser Code wurde bereits verwendet',
    usedText: 'Mit diesem Code wurde bereits eine Antwort gespeichert. Jeder Code öffnet die Umfrage einmal.',
    busyTitle: 'Zu viele Versuche',
    busyText: 'Gerade wurden zu viele Codes versucht. Bitte warten Sie eine Minute und versuchen Sie es dann erneut.',
    enter: 'Code eingeben',
  },
  fr: {
    title: 'Ouvrir votre enquête',
    intro: 'Saisissez le code d’accès figurant sur votre invitation pour ouvrir votre enquête.',
    label: 'Code d’accès',
    hint: '12 lettres et chiffres, par exemple {example}. Majuscules, espaces et tirets sont sans importance.',
    button: 'Ouvrir mon enquête',
    checkTitle: 'Vérifiez votre code d’accès',
    missing: 'Saisissez votre code d’accès.',
    malformed: 'Un code d’accès comporte 12 lettres et chiffres, par exemple {example}. Vérifiez votre saisie.',
    wrong: 'Ce code est introuvable. Comparez-le à votre invitation et réessayez.',
    usedTitle: 'Ce code a déjà été utilisé',
    usedText: 'Une réponse a déjà été enregistrée avec ce code. Chaque code n’ouvre l’enquête qu’une fois.',
    busyTitle: 'Trop de tentatives',
    busyText: 'Trop de codes viennent d’être essayés. Patientez une minute, puis réessayez.',
    enter: 'Saisir un code',
  },
  es: {
    title: 'Abrir su encuesta',
    intro: 'Escriba el código de acceso de su invitación para abrir su encuesta.',
    label: 'Código de acceso',
    hint: '12 letras y números, por ejemplo {example}. Las mayúsculas, los espacios y los guiones no importan.',
    button: 'Abrir mi encuesta',
    checkTitle: 'Revise su código de acceso',
    missing: 'Escriba su código de acceso.',
    malformed: 'Un código de acceso tiene 12 letras y números, por ejemplo {example}. Revise lo que escribió.',
    wrong: 'No se encontró este código. Compárelo con su invitación e inténtelo de nuevo.',
    usedTitle: 'Este código ya se utilizó',
    usedText: 'Ya se registró una respuesta con este código. Cada código abre la encuesta una sola vez.',
    busyTitle: 'Demasiados intentos',
    busyText: 'Se acaban de probar demasiados códigos. Espere un minuto y vuelva a intentarlo.',
    enter: 'Escribir un código',
  },
  pt: {
    title: 'Abrir o seu questionário',
    intro: 'Escreva o código de acesso do seu convite para abrir o seu questionário.',
    label: 'Código de acesso',
    hint: '12 letras e algarismos, por exemplo {example}. Maiúsculas, espaços e hífenes não importam.',
    button: 'Abrir o meu questionário',
    checkTitle: 'Verifique o seu código de acesso',
    missing: 'Escreva o seu código de acesso.',
    malformed: 'Um código de acesso tem 12 letras e algarismos, por exemplo {example}. Verifique o que escreveu.',
    wrong: 'Este código não foi encontrado. Compare-o com o seu convite e tente novamente.',
    usedTitle: 'Este código já foi utilizado',
    usedText: 'Já foi registada uma resposta com este código. Cada código abre o questionário uma só vez.',
    busyTitle: 'Demasiadas tentativas',
    busyText: 'Acabaram de ser experimentados demasiados códigos. Aguarde um minuto e tente novamente.',
    enter: 'Escrever um código',
  },
  nl: {
    title: 'Uw enquête openen',
    intro: 'Typ de toegangscode van uw uitnodiging om uw enquête te openen.',
    label: 'Toegangscode',
    hint: '12 letters en cijfers, bijvoorbeeld {example}. Hoofdletters, spaties en streepjes maken niet uit.',
    button: 'Mijn enquête openen',
    checkTitle: 'Controleer uw toegangscode',
    missing: 'Typ uw toegangscode.',
    malformed: 'Een toegangscode heeft 12 letters en cijfers, bijvoorbeeld {example}. Controleer wat u hebt getypt.',
    wrong: 'Deze code is niet gevonden. Vergelijk hem met uw uitnodiging en probeer het opnieuw.',
    usedTitle: 'Deze code is al gebruikt',
    usedText: 'Met deze code is al een antwoord opgeslagen. Elke code opent de enquête één keer.',
    busyTitle: 'Te veel pogingen',
    busyText: 'Er zijn zojuist te veel codes geprobeerd. Wacht een minuut en probeer het dan opnieuw.',
    enter: 'Een code typen',
  },
  it: {
    title: 'Apra il Suo sondaggio',
    intro: 'Digiti il codice di accesso del Suo invito per aprire il sondaggio.',
    label: 'Codice di accesso',
    hint: '12 lettere e cifre, ad esempio {example}. Maiuscole, spazi e trattini non contano.',
    button: 'Apri il mio sondaggio',
    checkTitle: 'Controlli il codice di accesso',
    missing: 'Digiti il Suo codice di accesso.',
    malformed: 'Un codice di accesso ha 12 lettere e cifre, ad esempio {example}. Controlli quello che ha digitato.',
    wrong: 'Questo codice non è stato trovato. Lo confronti con il Suo invito e riprovi.',
    usedTitle: 'Questo codice è già stato usato',
    usedText: 'Con questo codice è già stata registrata una risposta. Ogni codice apre il sondaggio una sola volta.',
    busyTitle: 'Troppi tentativi',
    busyText: 'Sono stati appena provati troppi codici. Attenda un minuto e riprovi.',
    enter: 'Digitare un codice',
  },
};

const wordsOf = (language: string) => {
  const words = catalogues[language] ?? en;
  return (key: keyof KioskWords) => words[key].replace('{example}', EXAMPLE);
};

/** The browser's language, when the answer page has words for it (distributions' interface-words.ts), else English. */
const languageOf = (req: Request) => interfaceLanguageOf(surveys.acceptedLanguages(req.get('accept-language')));

/** The form, with what was typed and why it was refused when it was. */
export function kioskForm(language: string, refused?: { typed: string; problem: 'missing' | 'malformed' | 'wrong' }) {
  const t = wordsOf(language);
  const described = refused ? 'code-hint code-error' : 'code-hint';
  const body = [
    `<h1>${e(t('title'))}</h1>`,
    `<p class="lead">${e(t('intro'))}</p>`,
    `<form method="post" action="/k" novalidate>`,
    `<p><label for="code"><strong>${e(t('label'))}</strong></label></p>`,
    `<p class="hint" id="code-hint">${e(t('hint'))}</p>`,
    refused ? `<p class="error" id="code-error" role="alert">${e(t(refused.problem))}</p>` : '',
    `<p><input type="text" name="${CODE_FIELD}" id="code" value="${e(refused?.typed ?? '')}" maxlength="40" autocomplete="off" autocapitalize="characters" autocorrect="off" spellcheck="false" required autofocus aria-describedby="${described}"${refused ? ' aria-invalid="true"' : ''}></p>`,
    `<button type="submit">${e(t('button'))}</button>`,
    `</form>`,
  ]
    .filter(Boolean)
    .join('\n');
  return layout(refused ? t('checkTitle') : t('title'), body, language);
}

/** A page that ends a try (used, too many), with the way back to the form. */
function endPage(language: string, title: 'usedTitle' | 'busyTitle', text: 'usedText' | 'busyText'): string {
  const t = wordsOf(language);
  return layout(
    t(title),
    `<h1>${e(t(title))}</h1>\n<p class="lead">${e(t(text))}</p>\n<p><a href="/k">${e(t('enter'))}</a></p>`,
    language,
  );
}

/** A page in the answer page's words (distributions' interface-words.ts). */
const notice = (language: string, title: TextKey, text: TextKey, reference?: string) => {
  const w = wordsFor(language);
  return messagePage(w.text(title), w.text(text, reference ? { reference } : {}), language);
};

export function kioskPages(deps: Dependencies): Router {
  const router = express.Router();
  const form = readForm((res, status) => {
    const language = languageOf(res.req);
    return status === 413
      ? notice(language, 'tooLargeTitle', 'tooLargeText')
      : notice(language, 'unsupportedTitle', 'unsupportedText');
  });

  const guarded = (handler: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await handler(req, res);
    } catch (error) {
      if (databaseUnavailable(error)) {
        if (!res.headersSent) {
          res.setHeader('Retry-After', unavailableRetryAfterSeconds);
          sendPage(res, 503, notice(languageOf(req), 'unavailableTitle', 'unavailableText'));
        }
        return;
      }
      deps.log.error({ err: error, requestId: res.locals.requestId }, 'kiosk page failed');
      const reference = String(res.locals.requestId ?? '');
      if (!res.headersSent) sendPage(res, 500, notice(languageOf(req), 'errorTitle', 'errorText', reference));
    }
  };

  router.get(
    '/k',
    guarded(async (req, res) => sendPage(res, 200, kioskForm(languageOf(req)))),
  );

  router.post(
    '/k',
    form,
    guarded(async (req, res) => {
      const language = languageOf(req);
      const fields = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
      const raw = fields[CODE_FIELD];
      const typed = (typeof raw === 'string' ? raw : '').slice(0, 100);
      if (typed.trim() === '') return sendPage(res, 400, kioskForm(language, { typed, problem: 'missing' }));
      const outcome = await openByCode(deps.db, deps.config, typed, req.ip ?? req.socket.remoteAddress ?? 'unknown');
      switch (outcome.kind) {
        case 'malformed':
          return sendPage(res, 400, kioskForm(language, { typed, problem: 'malformed' }));
        case 'wrong':
          return sendPage(res, 400, kioskForm(language, { typed, problem: 'wrong' }));
        case 'throttled':
          res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
          return sendPage(res, 429, endPage(language, 'busyTitle', 'busyText'));
        case 'used':
          return sendPage(res, 410, endPage(language, 'usedTitle', 'usedText'));
        case 'open':
          // The answer page's headers: the next URL holds the token, so no cache keeps this answer nor any
          // Referer carries it.
          res.setHeader('Cache-Control', 'no-store');
          res.setHeader('Referrer-Policy', 'no-referrer');
          return res.redirect(303, `/s/${outcome.token}`);
      }
    }),
  );

  return router;
}
