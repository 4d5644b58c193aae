/**
 * A translated survey end to end, over real HTTP, PostgreSQL and SMTP: respondents' languages (PUT and targeting),
 * the invitation e-mail in the recipient's language, the answer page in the recipient's language, else the
 * browser's, with a switcher that works without scripts, the language each response records, export labels in a
 * chosen language, and analytics that count every language's answers together by id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import type { TestService } from '../helpers/service.js';
import {
  catalogues,
  interfaceLanguages,
  placeholdersOf,
  wordsFor,
  type Plural,
} from '../../server/src/modules/distributions/interface-words.js';
import { allTypes, surveyBody, validForm } from '../helpers/surveys.js';
import { exportToBuffer, parseCsv } from '../exports/fixtures.js';
import { allRecipients, embedUrl, startWithSmtp, tenant, waitForStatus } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

let t: TestService;
let smtp: TestSmtp;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const form = (fields: Array<[string, string]>, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

const german: components['schemas']['SurveyTranslationInput'] = {
  title: 'Puls-Umfrage Q4',
  description: 'Wie sich die Arbeit anfühlt',
  questions: {
    q_1: { text: 'Wie wahrscheinlich ist es, dass Sie uns empfehlen?' },
    q_2: { text: 'Die Arbeitsmittel sind gut', minLabel: 'Schlecht', maxLabel: 'Gut' },
    q_3: { text: 'Wo arbeiten Sie?', choices: { c_1: 'Im Büro', c_2: 'Zu Hause', c_3: 'Hybrid' } },
  },
  email: { subject: 'Ihre Meinung zählt', message: 'Bitte nehmen Sie an unserer Puls-Umfrage teil.' },
};

describe('a survey in English and German', () => {
  it('reaches each respondent in their language: e-mail, answer page, switcher, responses, exports, analytics', async () => {
    const { live } = await tenant(t);
    // Respondents with their languages: de-CH gets German (its primary language), fr gets the default.
    await live.respondents.upsert('P-DE', { email: 'anna@example.com', firstName: 'Anna', language: 'de-CH' });
    await live.respondents.upsert('P-EN', { email: 'bob@example.com', firstName: 'Bob' });
    await live.respondents.upsert('P-FR', { email: 'chloe@example.com', firstName: 'Chloé', language: 'fr' });
    expect((await live.respondents.get('P-DE')).language).toBe('de-CH');
    expect((await live.respondents.get('P-EN')).language).toBeNull();
    const badLanguage = await live.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'P-XX' } },
      body: { email: 'x@example.com', language: 'not a tag' },
    });
    expect(badLanguage.response.status).toBe(400);
    expect(badLanguage.error?.error.details).toContainEqual(
      expect.objectContaining({ path: '/body/language', code: 'pattern' }),
    );

    // The rating allows N/A, to see the page's words for it.
    const questions = allTypes.map((q) => (q.type === 'rating' ? { ...q, allowNotApplicable: true } : q));
    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'de'], questions }));
    await live.surveys.translations.upsert(survey.id, 'de', german);
    await live.surveys.launch(survey.id);

    // Targeting by language.
    const preview = await live.distributions.preview(survey.id, {
      targeting: { filters: [{ field: 'language', operator: 'equals', value: 'de-CH' }] },
    });
    expect(preview.matchedCount).toBe(1);

    const d = await live.distributions.create(survey.id, {
      targeting: { filters: [{ field: 'externalId', operator: 'in', value: ['P-DE', 'P-EN', 'P-FR'] }] },
      distribution: { method: 'email', subject: 'Your voice counts' },
    });
    await waitForStatus(live, survey.id, d.id, ['sent']);
    await smtp.settled();
    const mailTo = (address: string) => smtp.received.find((m) => m.envelopeTo.includes(address))!;
    expect(mailTo('anna@example.com').subject).toBe('Ihre Meinung zählt');
    expect(mailTo('anna@example.com').text).toContain('Bitte nehmen Sie an unserer Puls-Umfrage teil.');
    expect(mailTo('bob@example.com').subject).toBe('Your voice counts');
    expect(mailTo('chloe@example.com').subject).toBe('Your voice counts');
    // The service's own words of the e-mail in German too; the link's last day written out in German.
    const [annaMail] = (await allRecipients(live, survey.id, d.id)).filter((r) => r.respondentExternalId === 'P-DE');
    const lastDay = new Intl.DateTimeFormat('de', { dateStyle: 'long', timeZone: 'UTC' }).format(
      new Date(annaMail!.expiresAt),
    );
    expect(lastDay).toMatch(/^\d{1,2}\. [A-Z][a-zä]+ \d{4}$/);
    for (const part of [mailTo('anna@example.com').text, mailTo('anna@example.com').html])
      expect(part).toContain(`Er gilt bis zum ${lastDay} und nimmt eine Antwort an.`);
    expect(mailTo('anna@example.com').text).toMatch(/^Hallo Anna,\n/);
    expect(mailTo('anna@example.com').text).toContain('Diese E-Mails nicht mehr erhalten: http');
    expect(mailTo('anna@example.com').html).toContain('<html lang="de" dir="ltr">');
    expect(mailTo('anna@example.com').html).toMatch(/>An der Umfrage teilnehmen<\/a>/);
    expect(mailTo('anna@example.com').html).toMatch(/>Diese E-Mails nicht mehr erhalten<\/a>/);
    // Chloé's French is not a language of the survey: English throughout.
    expect(mailTo('chloe@example.com').text).toMatch(/^Hello Chloé,\n/);
    expect(mailTo('chloe@example.com').html).toMatch(/>Answer the survey<\/a>/);

    // Each recipient's personal link, as their e-mail carries it.
    const linkIn = (address: string) => /(http\S+\/s\/\S+)/.exec(mailTo(address).text)![1]!;
    const links = new Map([
      ['P-DE', linkIn('anna@example.com')],
      ['P-EN', linkIn('bob@example.com')],
      ['P-FR', linkIn('chloe@example.com')],
    ]);
    expect((await allRecipients(live, survey.id, d.id)).map((r) => r.status)).toEqual(['sent', 'sent', 'sent']);
    // The recipient's language.
    const anna = await (await fetch(links.get('P-DE')!)).text();
    expect(anna).toContain('<h1>Puls-Umfrage Q4</h1>');
    expect(anna).toContain('<label for="q_3-c_1">Im Büro</label>');
    expect(anna).toContain('Schlecht');
    // Untranslated strings fall back to the default language.
    expect(anna).toContain('Anything else?');
    // The switcher: plain links, the current language marked.
    expect(anna).toMatch(/<nav class="languages" aria-label="Sprache">/);
    expect(anna).toMatch(/<a href="\/s\/[^"?]+\?lang=en" hreflang="en" lang="en">English<\/a>/);
    expect(anna).toContain('<span aria-current="true" lang="de">Deutsch</span>');
    expect(anna).toMatch(/<form method="post" action="\/s\/[^"?]+\?lang=de"/);
    // The page's own words in German; the author's scale labels stay theirs.
    expect(anna).toContain('<html lang="de" dir="ltr">');
    expect(anna).toContain('<button type="submit">Antworten absenden</button>');
    expect(anna).toContain('<span class="req">(Pflichtfrage)</span>');
    expect(anna).toContain('Wo arbeiten Sie? (optional)');
    expect(anna).toContain('<span>0 = Überhaupt nicht wahrscheinlich</span><span>10 = Äußerst wahrscheinlich</span>');
    expect(anna).toContain('<span>Trifft nicht zu</span>');
    expect(anna).toContain('<span>1 = Schlecht</span><span>5 = Gut</span>');
    expect(anna).toContain('Wählen Sie 1 bis 2 aus.');
    expect(anna).not.toMatch(/Submit my answers|\(required\)|Not at all likely|Not applicable/);

    // Without a language of their own: the browser's, else the default.
    const bobLink = links.get('P-EN')!;
    const bobGerman = await (await fetch(bobLink, { headers: { 'accept-language': 'fr;q=0.9, de-DE;q=0.8' } })).text();
    expect(bobGerman).toContain('<h1>Puls-Umfrage Q4</h1>');
    const bobDefault = await (await fetch(bobLink, { headers: { 'accept-language': 'ja' } })).text();
    expect(bobDefault).toContain('<h1>Q4 engagement pulse</h1>');
    expect(bobDefault).toContain('<html lang="en" dir="ltr">');
    // The switcher overrides both.
    const annaEnglish = await (await fetch(`${links.get('P-DE')!}?lang=en`)).text();
    expect(annaEnglish).toContain('<h1>Q4 engagement pulse</h1>');
    expect(annaEnglish).toContain('<label for="q_3-c_1">Office</label>');
    const bobSwitched = await (await fetch(`${bobLink}?lang=de`)).text();
    expect(bobSwitched).toContain('<h1>Puls-Umfrage Q4</h1>');

    // Each response records the language of the page it was sent from (the form's action keeps it).
    const annaAction = /action="([^"]+)"/.exec(anna)![1]!.replace(/&amp;/g, '&');
    // A bad answer: the summary and the message next to the question in German.
    const bad = await fetch(new URL(annaAction, t.url), form(validForm.filter(([name]) => name !== 'q_1')));
    expect(bad.status).toBe(400);
    const badPage = await bad.text();
    expect(badPage).toContain('<h2>Bei Ihren Antworten gibt es 1 Problem</h2>');
    expect(badPage).toContain('<p class="error" id="q_1-error">Bitte beantworten Sie diese Frage.</p>');
    // The summary's link names its question, in the page's language.
    expect(badPage).toContain(
      '>Wie wahrscheinlich ist es, dass Sie uns empfehlen?: Bitte beantworten Sie diese Frage.</a>',
    );
    expect(badPage).toContain('<title>Bitte prüfen Sie Ihre Antworten – Puls-Umfrage Q4</title>');
    const sent = await fetch(new URL(annaAction, t.url), form(validForm));
    expect(sent.status).toBe(200);
    const bobSent = await fetch(bobLink, form(validForm, { 'accept-language': 'en-GB' }));
    expect(bobSent.status).toBe(200);
    const chloeSent = await fetch(links.get('P-FR')!, form(validForm));
    expect(chloeSent.status).toBe(200);
    const responses = await live.responses.list(survey.id);
    expect(new Map(responses.map((r) => [r.respondentExternalId, r.language]))).toEqual(
      new Map([
        ['P-DE', 'de'],
        ['P-EN', 'en'],
        ['P-FR', 'en'],
      ]),
    );
    for (const language of ['de', 'de', 'en'] as const)
      await live.responses.submit(survey.id, {
        answers: [
          { questionId: 'q_1', value: 10 },
          { questionId: 'q_2', value: 5 },
          { questionId: 'q_3', value: 'c_1' },
        ],
        language,
      });

    // Analytics count every language's answers together, by id.
    const stats = await live.analytics.static(survey.id);
    expect(stats.responseCount).toBe(6);
    const where = stats.questions.find((q) => q.questionId === 'q_3') as components['schemas']['ChoiceQuestionStats'];
    expect(where.answeredCount).toBe(6);
    // validForm answers c_3; the API submissions c_1 (two in German, one in English).
    expect(where.choices.map((c) => [c.choiceId, c.count])).toEqual([
      ['c_1', 3],
      ['c_2', 0],
      ['c_3', 3],
    ]);

    // Export labels follow the export's language; records carry each response's.
    const csv = await exportToBuffer(live, survey.id, { format: 'csv', language: 'de', choiceValues: 'labels' });
    const rows = await parseCsv(csv.bytes.toString('utf8'));
    expect(rows[0]).toEqual([
      'responseId',
      'submittedAt',
      'respondentExternalId',
      'distributionId',
      'language',
      'Wie wahrscheinlich ist es, dass Sie uns empfehlen?',
      'Die Arbeitsmittel sind gut',
      'Wo arbeiten Sie?',
      'Benefits?',
      'Anything else?',
    ]);
    expect(rows.slice(1).map((row) => row[7])).toEqual(expect.arrayContaining(['Im Büro', 'Hybrid']));
    // Each row carries its response's language.
    expect(
      rows
        .slice(1)
        .map((row) => row[4])
        .sort(),
    ).toEqual(['de', 'de', 'de', 'en', 'en', 'en']);
    const plain = await exportToBuffer(live, survey.id, { format: 'csv' });
    expect((await parseCsv(plain.bytes.toString('utf8')))[0]!.slice(5)).toEqual(['q_1', 'q_2', 'q_3', 'q_4', 'q_5']);
    const json = await exportToBuffer(live, survey.id, { format: 'json' });
    const records = JSON.parse(json.bytes.toString('utf8')) as components['schemas']['ExportRecord'][];
    expect(records.map((r) => r.language).sort()).toEqual(['de', 'de', 'de', 'en', 'en', 'en']);
    const unlisted = await live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: survey.id } },
      body: { format: 'csv', language: 'fr' },
    });
    expect(unlisted.response.status).toBe(400);
    expect(unlisted.error?.error.details).toContainEqual(
      expect.objectContaining({ path: '/body/language', code: 'not_found' }),
    );

    // Analytics filters do not take the respondent's language (their copies of respondents have none).
    const filtered = await live.GET('/api/v1/surveys/{id}/analytics/static', {
      params: {
        path: { id: survey.id },
        query: { filters: JSON.stringify({ filters: [{ field: 'language', operator: 'equals', value: 'de' }] }) },
      },
    });
    expect(filtered.response.status).toBe(400);
  });
});

describe("the service's own words", () => {
  it("follow the page's language: the browser's French, an unlisted language's English, and other pages", async () => {
    const { live } = await tenant(t);
    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'fr', 'sv'] }));
    await live.surveys.launch(survey.id);
    const d = await live.distributions.create(survey.id, {
      targeting: { filters: [] },
      distribution: { method: 'embed' },
    });
    const url = embedUrl(await waitForStatus(live, survey.id, d.id, ['sent']));
    const french = await (await fetch(url, { headers: { 'accept-language': 'fr-CA, en;q=0.5' } })).text();
    expect(french).toContain('<html lang="fr" dir="ltr">');
    expect(french).toContain('<button type="submit">Envoyer mes réponses</button>');
    expect(french).toContain('<span class="req">(obligatoire)</span>');
    expect(french).toContain('<span>0 = Pas du tout probable</span><span>10 = Extrêmement probable</span>');
    expect(french).toContain('<nav class="languages" aria-label="Langue">');
    const frenchAction = new URL(/action="([^"]+)"/.exec(french)![1]!.replace(/&amp;/g, '&'), t.url);
    const frenchBad = await (await fetch(frenchAction, form([['q_1', '11']]))).text();
    expect(frenchBad).toContain('Il y a 2 problèmes dans vos réponses');
    expect(frenchBad).toContain('Choisissez un nombre de 0 à 10.');
    // The summary's link: the untranslated question, then the message, with French spacing before the colon.
    expect(frenchBad).toContain('>How likely are you to recommend us?\u00a0: Choisissez un nombre de 0 à 10.</a>');
    // Swedish is a language of the survey without a catalogue: the page says so, its words are English.
    const swedish = await (await fetch(`${url}?lang=sv`)).text();
    expect(swedish).toContain('<html lang="sv" dir="ltr">');
    expect(swedish).toContain('<button type="submit">Submit my answers</button>');
    expect(swedish).toContain('<span class="req">(required)</span>');
    // A link that is not valid: the browser's language, when there are words for it.
    const unknown = await fetch(`${t.url}/s/not-a-token`, { headers: { 'accept-language': 'es' } });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('<h1>Este enlace no es válido</h1>');
    const unknownJapanese = await fetch(`${t.url}/s/not-a-token`, { headers: { 'accept-language': 'ja' } });
    expect(await unknownJapanese.text()).toContain('<h1>This link is not valid</h1>');
  });

  it('every catalogue has every key of English, of the same kind, with the same placeholders', () => {
    const english = catalogues.en!;
    const isPlural = (value: unknown): value is Plural => typeof value === 'object' && value !== null;
    const placeholders = (value: string | Plural) =>
      [...new Set((isPlural(value) ? Object.values(value) : [value]).flatMap(placeholdersOf))].sort();
    for (const [tag, catalogue] of Object.entries(catalogues)) {
      const full = (interfaceLanguages as readonly string[]).includes(tag);
      if (full) expect(Object.keys(catalogue).sort(), tag).toEqual(Object.keys(english).sort());
      const categories = new Intl.PluralRules(tag, { type: 'ordinal' }).resolvedOptions().pluralCategories;
      const cardinal = new Intl.PluralRules(tag).resolvedOptions().pluralCategories;
      for (const [key, value] of Object.entries(catalogue) as [keyof typeof english, string | Plural][]) {
        const reference = english[key];
        expect(reference, `${tag}.${key} is not a key of en`).toBeDefined();
        expect(isPlural(value), `${tag}.${key}`).toBe(isPlural(reference));
        expect(placeholders(value), `${tag}.${key}`).toEqual(placeholders(reference!));
        // Only plural forms the language has (ordinal for places).
        if (isPlural(value))
          for (const form of Object.keys(value))
            expect(key === 'place' ? categories : cardinal, `${tag}.${key}.${form}`).toContain(form);
        if (typeof value === 'string') expect(value.trim(), `${tag}.${key}`).not.toBe('');
      }
    }
    // Per string: de-AT → de → en; de-CH has its own spelling of one word; an unknown language is English.
    expect(wordsFor('de-AT').text('submit')).toBe('Antworten absenden');
    expect(wordsFor('de-AT').date('2027-01-22')).toBe('22. Jänner 2027');
    expect(wordsFor('de-CH').text('npsHigh')).toBe('Äusserst wahrscheinlich');
    expect(wordsFor('de-CH').text('npsLow')).toBe('Überhaupt nicht wahrscheinlich');
    expect(wordsFor('xx').text('submit')).toBe('Submit my answers');
    expect(wordsFor('en').count('place', 22)).toBe('22nd place');
    expect(wordsFor('fr').count('place', 1)).toBe('1re place');
    expect(wordsFor('ar').dir).toBe('rtl');
  });
});
