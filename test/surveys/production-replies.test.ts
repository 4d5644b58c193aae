/**
 * What production sends, with response validation off: the survey list's page is JSON text PostgreSQL builds and the
 * service splices into the envelope unparsed, and every JSON reply is written without Express's `res.json`. Every
 * list item must be exactly what GET /surveys/{id} gives for the same survey, in every state, with counted
 * responses, unicode and characters JSON escapes; a reply's headers must describe its bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
let liveKey: string;
beforeAll(async () => {
  t = await startTestService({ validateResponses: false });
  ({ live, liveKey } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

const path = (id: string) => ({ params: { path: { id } } });

describe('listSurveys, served from PostgreSQL-built JSON', () => {
  it('gives, item for item, what getSurvey gives, in every state and with escaped text', async () => {
    const ids: string[] = [];
    const titles = ['Draft "quoted" \\ back\nslash', 'Active — ünïcödé 🎉', 'Paused\ttab', 'Closed </script>'];
    for (const title of titles) {
      const created = await live.unwrap(
        live.POST('/api/v1/surveys', { body: surveyBody({ title, description: null }) }),
      );
      ids.push(created.id);
    }
    for (const id of ids.slice(1)) await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(id)));
    await live.unwrap(
      live.POST('/api/v1/surveys/{id}/responses', { ...path(ids[1]!), body: { answers: validAnswers } }),
    );
    await live.unwrap(live.POST('/api/v1/surveys/{id}/pause', path(ids[2]!)));
    await live.unwrap(live.POST('/api/v1/surveys/{id}/close', path(ids[3]!)));

    const raw = await fetch(`${t.url}/api/v1/surveys?pageSize=10`, { headers: { authorization: `Bearer ${liveKey}` } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const page = (await raw.json()) as { data: unknown[]; pagination: unknown; meta: { requestId: string } };
    expect(page.meta.requestId).toBe(raw.headers.get('x-request-id'));
    expect(page.pagination).toEqual({ page: 1, pageSize: 10, totalItems: 4, totalPages: 1, hasMore: false });
    const one = await Promise.all(
      [...ids].reverse().map((id) => live.unwrap(live.GET('/api/v1/surveys/{id}', path(id)))),
    );
    expect(page.data).toEqual(one);
    expect(one.map((s) => s.status)).toEqual(['closed', 'paused', 'active', 'draft']);
    expect(one[2]!.responseCount).toBe(1);
  });

  it('gives an empty page past the end with the total, and filters as before', async () => {
    const { live: other } = await tenantWithRaisedLimits(t);
    await other.unwrap(other.POST('/api/v1/surveys', { body: surveyBody({ title: 'only 100% _match_' }) }));
    const past = await other.GET('/api/v1/surveys', { params: { query: { page: 3, pageSize: 1 } } });
    expect(past.data?.data).toEqual([]);
    expect(past.data?.pagination).toMatchObject({ page: 3, totalItems: 1 });
    const found = await other.GET('/api/v1/surveys', { params: { query: { search: '100% _' } } });
    expect(found.data?.data.map((s) => s.title)).toEqual(['only 100% _match_']);
    const none = await other.GET('/api/v1/surveys', { params: { query: { status: 'active' } } });
    expect(none.data).toMatchObject({ data: [], pagination: { totalItems: 0 } });
  });

  it('writes a submission and its idempotent replay with the headers that describe the bytes', async () => {
    const surveyId = (await live.unwrap(live.POST('/api/v1/surveys', { body: surveyBody({ title: 'Sent as is' }) })))
      .id;
    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(surveyId)));
    const send = () =>
      fetch(`${t.url}/api/v1/surveys/${surveyId}/responses`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${liveKey}`,
          'content-type': 'application/json',
          'idempotency-key': 'sent-as-is-1',
        },
        body: JSON.stringify({ answers: validAnswers }),
      });
    const first = await send();
    const text = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(first.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const body = JSON.parse(text) as { data: { id: string; surveyId: string }; meta: { requestId: string } };
    expect(body.data.surveyId).toBe(surveyId);
    expect(body.meta.requestId).toBe(first.headers.get('x-request-id'));
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as typeof body).data).toEqual(body.data);
  });
});
