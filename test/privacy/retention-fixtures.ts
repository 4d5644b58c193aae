/** Organizations with answered surveys whose responses are made old, for the retention tests. */
import { sql } from 'kysely';
import type { TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { answersOf, everyone, questions, type Client } from './fixtures.js';

export interface Org {
  organizationId: string;
  live: Client;
  key: string;
}

export async function org(t: TestService): Promise<Org> {
  const tenant = await tenantWithRaisedLimits(t);
  for (const p of everyone) {
    const { externalId, ...fields } = p;
    await tenant.live.respondents.upsert(externalId, fields);
  }
  return { organizationId: tenant.organizationId, live: tenant.live, key: tenant.liveKey };
}

/** A launched survey answered once by each of `everyone` (8 people, 4 per department). */
export async function answeredSurvey(live: Client, title: string): Promise<{ id: string; responseIds: string[] }> {
  const survey = await live.unwrap(live.POST('/api/v1/surveys', { body: { title, questions } }));
  await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  const responseIds: string[] = [];
  for (const [i, person] of everyone.entries()) {
    const response = await live.unwrap(
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: survey.id } },
        body: { respondentExternalId: person.externalId, answers: answersOf(person, i) },
      }),
    );
    responseIds.push(response.id);
  }
  return { id: survey.id, responseIds };
}

/**
 * Makes responses `days` old, as if they had been submitted then (all at the same instant: Citus refuses arithmetic
 * on a column's time in an UPDATE, since timestamptz − interval is not immutable).
 */
export async function age(
  t: TestService,
  organizationId: string,
  responseIds: readonly string[],
  days: number,
): Promise<void> {
  await sql`update responses set submitted_at = now() - make_interval(days => ${days})
    where organization_id = ${organizationId} and environment = 'LIVE' and id = any(${[...responseIds]}::text[])`.execute(
    t.db,
  );
}
