/**
 * Translations through the SDK over real HTTP: a survey's languages, a translation's round trip with the strings
 * it lacks, every kind of bad input (a 400 naming its path and code, nothing stored), versions after the launch,
 * and a response's language.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SurveyServiceError, type components } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

type TranslationInput = components['schemas']['SurveyTranslationInput'];

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

/** The error a call answers with (it must fail). */
async function failure(call: Promise<unknown>): Promise<SurveyServiceError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof SurveyServiceError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

const german: TranslationInput = {
  title: 'Puls-Umfrage Q4',
  questions: {
    q_1: { text: 'Wie wahrscheinlich ist es, dass Sie uns empfehlen?' },
    q_2: { text: 'Die Arbeitsmittel sind gut', minLabel: 'Schlecht' },
    q_3: { text: 'Wo arbeiten Sie?', choices: { c_1: 'Im Büro', c_2: 'Zu Hause' } },
  },
  email: { subject: 'Ihre Meinung zählt', message: 'Bitte nehmen Sie an unserer Umfrage teil.' },
};

describe('survey languages', () => {
  it('are ["en"] unless given, listed on every read, and checked for repeats', async () => {
    const plain = await live.surveys.create(surveyBody());
    expect(plain.languages).toEqual(['en']);
    const multi = await live.surveys.create(surveyBody({ languages: ['en', 'de', 'fr-CH'] }));
    expect(multi.languages).toEqual(['en', 'de', 'fr-CH']);
    expect((await live.surveys.get(multi.id)).languages).toEqual(['en', 'de', 'fr-CH']);
    const listed = await live.surveys.list({ search: 'Q4' });
    expect(listed.find((s) => s.id === multi.id)?.languages).toEqual(['en', 'de', 'fr-CH']);

    const repeated = await failure(live.surveys.create(surveyBody({ languages: ['en', 'de', 'DE'] })));
    expect(repeated.status).toBe(400);
    expect(repeated.details).toContainEqual(expect.objectContaining({ path: '/body/languages/2', code: 'duplicate' }));
    const malformed = await failure(live.surveys.create(surveyBody({ languages: ['english!'] })));
    expect(malformed.details).toContainEqual(expect.objectContaining({ path: '/body/languages/0', code: 'pattern' }));
  });
});

describe('translations', () => {
  it('round-trip through PUT, GET and DELETE, listing the strings not translated yet', async () => {
    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'de'] }));
    const missingBefore = await failure(live.surveys.translations.get(survey.id, 'de'));
    expect(missingBefore.status).toBe(404);

    const created = await live.PUT('/api/v1/surveys/{id}/translations/{language}', {
      params: { path: { id: survey.id, language: 'de' } },
      body: german,
    });
    expect(created.response.status).toBe(201);
    const stored = await live.surveys.translations.get(survey.id, 'DE');
    expect(stored).toMatchObject({ language: 'de', title: 'Puls-Umfrage Q4', email: german.email });
    expect(stored.questions).toEqual(german.questions);
    // The survey's description, q_2's max label, q_3's third choice, and the whole of q_4 and q_5.
    expect(stored.missing).toEqual([
      '/description',
      '/questions/q_2/maxLabel',
      '/questions/q_3/choices/c_3',
      '/questions/q_4/text',
      '/questions/q_4/choices/c_1',
      '/questions/q_4/choices/c_2',
      '/questions/q_4/choices/c_3',
      '/questions/q_4/choices/c_4',
      '/questions/q_5/text',
    ]);

    // Replaced whole: a string left out is missing again.
    const replaced = await live.PUT('/api/v1/surveys/{id}/translations/{language}', {
      params: { path: { id: survey.id, language: 'de' } },
      body: {
        title: 'Puls',
        description: 'Wie sich die Arbeit anfühlt',
        questions: { q_1: { text: 'Empfehlen?' } },
      },
    });
    expect(replaced.response.status).toBe(200);
    expect(replaced.data?.data.email).toBeNull();
    expect(replaced.data?.data.missing).not.toContain('/description');
    expect(replaced.data?.data.missing).toContain('/questions/q_2/text');

    expect(await live.surveys.translations.delete(survey.id, 'de')).toEqual({ id: 'de', deleted: true });
    expect((await failure(live.surveys.translations.get(survey.id, 'de'))).status).toBe(404);
    expect((await failure(live.surveys.translations.delete(survey.id, 'de'))).status).toBe(404);

    // Before the launch the default language may change; a language that becomes the default loses its
    // translation (its strings are now the survey's own), and a survey may go back to one language.
    await live.surveys.translations.upsert(survey.id, 'de', german);
    expect((await live.surveys.update(survey.id, { languages: ['de', 'en'] })).languages).toEqual(['de', 'en']);
    expect((await failure(live.surveys.translations.get(survey.id, 'de'))).status).toBe(404);
    await live.surveys.translations.upsert(survey.id, 'en', german);
    expect((await live.surveys.update(survey.id, { languages: ['de'] })).languages).toEqual(['de']);
    expect((await failure(live.surveys.translations.get(survey.id, 'en'))).status).toBe(404);
  });

  it('refuses a language the survey does not list, ids it does not have, and parts a question lacks; stores nothing', async () => {
    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'de'] }));
    const unlisted = await failure(live.surveys.translations.upsert(survey.id, 'fr', german));
    expect(unlisted.status).toBe(400);
    expect(unlisted.details).toEqual([expect.objectContaining({ path: '/path/language', code: 'not_found' })]);
    const defaultLanguage = await failure(live.surveys.translations.upsert(survey.id, 'en', german));
    expect(defaultLanguage.details).toEqual([
      expect.objectContaining({ path: '/path/language', code: 'invalid_value' }),
    ]);

    const bad = await failure(
      live.surveys.translations.upsert(survey.id, 'de', {
        title: 'Puls',
        questions: {
          q_9: { text: 'Gibt es nicht' },
          q_1: { text: 'NPS', minLabel: 'Nie' },
          q_3: { text: 'Wo?', choices: { c_1: 'Büro', c_7: 'Mond' }, rows: { r_1: 'Zeile' } },
          q_5: { text: 'Sonst?', columns: { k_1: 'Spalte' } },
        },
      }),
    );
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('validation_failed');
    expect(bad.details.map((d) => [d.path, d.code])).toEqual([
      ['/body/questions/q_9', 'not_found'],
      ['/body/questions/q_1/minLabel', 'not_found'],
      ['/body/questions/q_3/choices/c_7', 'not_found'],
      ['/body/questions/q_3/rows', 'not_found'],
      ['/body/questions/q_5/columns', 'not_found'],
    ]);
    // The schema's problems and the survey's, in one 400.
    const schema = await failure(
      live.surveys.translations.upsert(survey.id, 'fr', {
        title: '',
        questions: { q_1: {}, q_9: { text: 'Gibt es nicht' } },
      } as never),
    );
    expect(schema.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/title', code: 'min_length' }),
        expect.objectContaining({ path: '/body/questions/q_1/text', code: 'required' }),
        expect.objectContaining({ path: '/path/language', code: 'not_found' }),
        expect.objectContaining({ path: '/body/questions/q_9', code: 'not_found' }),
      ]),
    );
    expect((await failure(live.surveys.translations.get(survey.id, 'de'))).status).toBe(404);
    const rows = await t.db.selectFrom('survey_translations').selectAll().where('survey_id', '=', survey.id).execute();
    expect(rows).toEqual([]);
  });

  it('after the launch, each change of a translation is a version; a closed survey refuses them', async () => {
    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'de'] }));
    await live.surveys.launch(survey.id);
    await live.surveys.translations.upsert(survey.id, 'de', german);
    expect((await live.surveys.get(survey.id)).version).toBe(2);
    // The same translation again changes nothing, so makes no version.
    await live.surveys.translations.upsert(survey.id, 'de', german);
    expect((await live.surveys.get(survey.id)).version).toBe(2);
    await live.surveys.translations.delete(survey.id, 'de');
    expect((await live.surveys.get(survey.id)).version).toBe(3);
    expect((await live.surveys.versions(survey.id)).map((v) => v.version)).toEqual([1, 2, 3]);

    // Languages may be added after the launch (a version), but the default language stays.
    const added = await live.surveys.update(survey.id, { languages: ['en', 'de', 'fr'] });
    expect(added.version).toBe(4);
    const moved = await failure(live.surveys.update(survey.id, { languages: ['de', 'en'] }));
    expect(moved.status).toBe(409);
    expect(moved.code).toBe('survey_active');
    expect(moved.details).toContainEqual(expect.objectContaining({ path: '/body/languages/0' }));

    // A language removed takes its translation with it.
    await live.surveys.translations.upsert(survey.id, 'fr', { title: 'Pouls', questions: {} });
    await live.surveys.update(survey.id, { languages: ['en', 'de'] });
    const left = await t.db
      .selectFrom('survey_translations')
      .select('language')
      .where('survey_id', '=', survey.id)
      .execute();
    expect(left).toEqual([]);

    await live.surveys.close(survey.id);
    const closed = await failure(live.surveys.translations.upsert(survey.id, 'de', german));
    expect(closed.status).toBe(409);
    expect(closed.code).toBe('invalid_state');
  });

  it('a response records the language it was answered in, one the survey lists', async () => {
    const survey = await live.surveys.create(surveyBody({ languages: ['en', 'de'] }));
    await live.surveys.launch(survey.id);
    const german = await live.responses.submit(survey.id, { answers: validAnswers, language: 'DE' });
    expect(german.language).toBe('de');
    expect((await live.responses.get(survey.id, german.id)).language).toBe('de');
    const unsaid = await live.responses.submit(survey.id, { answers: validAnswers });
    expect(unsaid.language).toBeNull();
    const refused = await failure(live.responses.submit(survey.id, { answers: validAnswers, language: 'fr' }));
    expect(refused.status).toBe(400);
    expect(refused.details).toEqual([expect.objectContaining({ path: '/body/language', code: 'not_found' })]);
  });
});
