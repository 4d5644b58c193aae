/**
 * A translated survey end to end, over real HTTP, PostgreSQL and SMTP: respondents' languages (PUT and targeting),
 * the invitation e-mail in the recipient's language, the answer page in the recipient's language, else the
 * browser's, with a switcher that works without scripts, the language each response records, export labels in a
 * chosen language, and analytics that count every language's answers together by id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import type { TestService } from '../helpers/service.js';
import { surveyBody, validForm } from '../helpers/surveys.js';
import { exportToBuffer, parseCsv } from '../exports/fixtures.js';
import { allRecipients, startWithSmtp, tenant, waitForStatus } from './fixtures.js';
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

    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'de'] }));
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

    // Each recipient's personal link, as their e-mail carries it.
    const linkIn = (address: string) => /Answer here: (\S+)/.exec(mailTo(address).text)![1]!;
    const links = new Map([
      ['P-DE', linkIn('anna@example.com')],
      ['P-EN', linkIn('bob@example.com')],
      ['P-FR', linkIn('chloe@example.com')],
    ]);
    expect((await allRecipients(live, survey.id, d.id)).map((r) => r.status)).toEqual(['sent', 'sent', 'sent']);
    // The recipient's language.
    const anna = await (await fetch(links.get('P-DE')!)).text();
    expect(anna).toContain('<html lang="de">');
    expect(anna).toContain('<h1>Puls-Umfrage Q4</h1>');
    expect(anna).toContain('<label for="q_3-c_1">Im Büro</label>');
    expect(anna).toContain('Schlecht');
    // Untranslated strings fall back to the default language.
    expect(anna).toContain('Anything else?');
    // The switcher: plain links, the current language marked.
    expect(anna).toMatch(/<nav class="languages" aria-label="Language">/);
    expect(anna).toMatch(/<a href="\/s\/[^"?]+\?lang=en" hreflang="en" lang="en">English<\/a>/);
    expect(anna).toContain('<span aria-current="true" lang="de">Deutsch</span>');
    expect(anna).toMatch(/<form method="post" action="\/s\/[^"?]+\?lang=de"/);

    // Without a language of their own: the browser's, else the default.
    const bobLink = links.get('P-EN')!;
    const bobGerman = await (await fetch(bobLink, { headers: { 'accept-language': 'fr;q=0.9, de-DE;q=0.8' } })).text();
    expect(bobGerman).toContain('<h1>Puls-Umfrage Q4</h1>');
    const bobDefault = await (await fetch(bobLink, { headers: { 'accept-language': 'ja' } })).text();
    expect(bobDefault).toContain('<h1>Q4 engagement pulse</h1>');
    expect(bobDefault).toContain('<html lang="en">');
    // The switcher overrides both.
    const annaEnglish = await (await fetch(`${links.get('P-DE')!}?lang=en`)).text();
    expect(annaEnglish).toContain('<h1>Q4 engagement pulse</h1>');
    expect(annaEnglish).toContain('<label for="q_3-c_1">Office</label>');
    const bobSwitched = await (await fetch(`${bobLink}?lang=de`)).text();
    expect(bobSwitched).toContain('<h1>Puls-Umfrage Q4</h1>');

    // Each response records the language of the page it was sent from (the form's action keeps it).
    const annaAction = /action="([^"]+)"/.exec(anna)![1]!.replace(/&amp;/g, '&');
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
      'Wie wahrscheinlich ist es, dass Sie uns empfehlen?',
      'Die Arbeitsmittel sind gut',
      'Wo arbeiten Sie?',
      'Benefits?',
      'Anything else?',
    ]);
    expect(rows.slice(1).map((row) => row[5])).toEqual(expect.arrayContaining(['Im Büro', 'Hybrid']));
    const plain = await exportToBuffer(live, survey.id, { format: 'csv' });
    expect((await parseCsv(plain.bytes.toString('utf8')))[0]!.slice(3)).toEqual(['q_1', 'q_2', 'q_3', 'q_4', 'q_5']);
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
