/**
 * Survey privacy (`settings.privacy`): its spellings and freezing, and a confidential survey across features —
 * answered through personal links and through the API, then read back through every place a response shows up
 * (responses, the respondent filter, the recipients list, events, webhook payloads, exports, analytics): the
 * respondents are stored (segments are exact) and never shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allRecipients,
  insertPeople,
  people,
  startWithSmtp,
  tenant,
  waitForStatus,
} from '../distributions/fixtures.js';
import type { TestSmtp } from '../distributions/smtp.js';
import { exportToBuffer, readXlsx } from '../exports/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { surveyBody, validAnswers, validForm } from '../helpers/surveys.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

let t: TestService;
let smtp: TestSmtp;
let receiver: Receiver;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await receiver?.close();
});

const path = (id: string) => ({ params: { path: { id } } });

describe('settings.privacy', () => {
  it('reads back with anonymous in step, takes either spelling, refuses the two disagreeing, and freezes at launch', async () => {
    const { live } = await tenant(t);
    const create = (settings: object) => live.POST('/api/v1/surveys', { body: surveyBody({ settings }) });

    const confidential = await create({ privacy: 'confidential' });
    expect(confidential.data!.data.settings).toEqual({
      privacy: 'confidential',
      anonymous: false,
      allowMultipleResponses: false,
    });
    expect((await create({ anonymous: true })).data!.data.settings.privacy).toBe('anonymous');
    expect((await create({ privacy: 'anonymous', anonymous: true })).response.status).toBe(201);
    const disagreeing = await create({ privacy: 'confidential', anonymous: true });
    expect(disagreeing.response.status).toBe(400);
    expect(disagreeing.error!.error.details!.map((detail) => detail.path)).toEqual(['/body/settings/anonymous']);

    // `anonymous: false` alone says "not anonymous": a confidential survey stays confidential.
    const id = confidential.data!.data.id;
    const patched = await live.PATCH('/api/v1/surveys/{id}', { ...path(id), body: { settings: { anonymous: false } } });
    expect(patched.data!.data.settings.privacy).toBe('confidential');

    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(id)));
    const read = await live.unwrap(live.GET('/api/v1/surveys/{id}', path(id)));
    const same = await live.PATCH('/api/v1/surveys/{id}', { ...path(id), body: { settings: read.settings } });
    expect(same.response.status).toBe(200);
    const changed = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(id),
      body: { settings: { privacy: 'identified' } },
    });
    expect(changed.response.status).toBe(409);
    expect(changed.error!.error.code).toBe('survey_active');
    expect(changed.error!.error.details!.map((detail) => detail.path)).toEqual(['/body/settings/privacy']);
    expect((await live.unwrap(live.GET('/api/v1/surveys/{id}', path(id)))).settings.privacy).toBe('confidential');
  });
});

describe('a confidential survey', () => {
  it('keeps who answered for segments and shows it nowhere: responses, recipients, events, webhooks, exports', async () => {
    const { live, organizationId } = await tenant(t);
    await live.unwrap(live.POST('/api/v1/webhooks', { body: { url: receiver.url('/confidential'), events: ['*'] } }));
    // 18 people, 6 in each of three departments.
    const everyone = people(18, 'CF');
    await insertPeople(t, organizationId, everyone);
    const ids = everyone.map((person) => person.externalId);
    const created = await live.unwrap(
      live.POST('/api/v1/surveys', { body: surveyBody({ settings: { privacy: 'confidential' } }) }),
    );
    const surveyId = created.id;
    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(surveyId)));
    const distribution = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'link' } },
      }),
    );
    await waitForStatus(live, surveyId, distribution.id, ['sent']);
    const links = new Map(
      (await allRecipients(live, surveyId, distribution.id)).map((r) => [r.respondentExternalId, r.link]),
    );

    // Five of each department answer (the first 15 people), two in three through their link, the rest through the API.
    const answered = ids.slice(0, 15);
    const byDepartment = new Map<string, number>();
    for (const [i, externalId] of answered.entries()) {
      const department = everyone.find((person) => person.externalId === externalId)!.department!;
      byDepartment.set(department, (byDepartment.get(department) ?? 0) + 1);
      if (i % 3 === 2) {
        const submitted = await live.POST('/api/v1/surveys/{id}/responses', {
          ...path(surveyId),
          body: { answers: validAnswers, respondentExternalId: externalId },
        });
        expect(submitted.response.status).toBe(201);
        expect(submitted.data!.data.respondentExternalId).toBeNull();
      } else {
        const page = await fetch(links.get(externalId)!, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(validForm).toString(),
          redirect: 'manual',
        });
        expect(page.status, `link of ${externalId}`).toBeLessThan(400);
      }
    }
    expect([...byDepartment.values()]).toEqual([5, 5, 5]);

    // Stored, so one response each still holds.
    const again = await live.POST('/api/v1/surveys/{id}/responses', {
      ...path(surveyId),
      body: { answers: validAnswers, respondentExternalId: answered[2]! },
    });
    expect(again.error?.error.code).toBe('duplicate_response');
    const stored = await t.db
      .selectFrom('responses')
      .select('respondent_external_id')
      .where('survey_id', '=', surveyId)
      .execute();
    expect(stored.map((row) => row.respondent_external_id).sort()).toEqual([...answered].sort());

    // Never shown.
    const shows = (text: string) => ids.filter((id) => text.includes(id));
    const listed = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId }, query: { pageSize: 100 } } }),
    );
    expect(listed).toHaveLength(15);
    expect(shows(JSON.stringify(listed))).toEqual([]);
    const one = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
        params: { path: { id: surveyId, responseId: listed[0]!.id } },
      }),
    );
    expect(one.respondentExternalId).toBeNull();
    const lookedUp = await live.GET('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId }, query: { respondentExternalId: answered[0]! } },
    });
    expect(lookedUp.data!.data).toEqual([]);

    // The recipients list says that someone responded, not when.
    const recipients = await allRecipients(live, surveyId, distribution.id);
    expect(
      recipients
        .filter((r) => r.status === 'responded')
        .map((r) => r.respondentExternalId)
        .sort(),
    ).toEqual([...answered].sort());
    expect(recipients.filter((r) => r.respondedAt !== null)).toEqual([]);

    // Events and webhook payloads.
    const submittedEvents: unknown[] = [];
    for await (const event of live.paginate('/api/v1/events', {
      params: { query: { type: 'response.submitted' } },
    } as never)) {
      submittedEvents.push(event);
    }
    expect(submittedEvents).toHaveLength(15);
    expect(shows(JSON.stringify(submittedEvents))).toEqual([]);
    const submittedBodies = () =>
      receiver
        .received('/confidential')
        .map((d) => d.body)
        .filter((body) => body.includes('"response.submitted"'));
    await eventually(() => submittedBodies().length >= 15, 30_000, '15 response.submitted deliveries', 100);
    expect(submittedBodies()).toHaveLength(15);
    expect(shows(submittedBodies().join('\n'))).toEqual([]);

    // Exports: not one identity, in any format.
    for (const format of ['ndjson', 'csv', 'xlsx'] as const) {
      const { bytes } = await exportToBuffer(live, surveyId, { format });
      let text = bytes.toString('utf8');
      if (format === 'xlsx') {
        const sheet = (await readXlsx(bytes)).worksheets[0]!;
        const cells: unknown[] = [];
        sheet.eachRow((row) => cells.push(row.values));
        text = JSON.stringify(cells);
        expect(cells.length).toBe(16);
      }
      expect(shows(text), format).toEqual([]);
    }

    // Segments are exact all the same.
    const analytics = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/analytics/static', {
        params: { path: { id: surveyId }, query: { segmentBy: 'department' } },
      }),
    );
    expect(Object.fromEntries(analytics.segments.map((s) => [s.value, s.responseCount]))).toEqual(
      Object.fromEntries(byDepartment),
    );
  });
});
