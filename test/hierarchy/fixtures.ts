/**
 * Shared steps of the hierarchy tests: people with managers, a preview's externalIds, a walk written plainly, answers
 * and a manager tree's rows.
 */
import { waitForSyncJob } from '@survey-service/sdk';
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

export type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

export async function put(client: Client, externalId: string, managerId: string | null, extra: object = {}) {
  return client.PUT('/api/v1/respondents/{externalId}', {
    params: { path: { externalId } },
    body: { email: `${externalId.toLowerCase()}@example.com`, managerId, ...extra },
  });
}

export async function person(client: Client, externalId: string, managerId: string | null, extra: object = {}) {
  const result = await put(client, externalId, managerId, extra);
  expect(result.response.status, JSON.stringify(result.error)).toBeLessThan(300);
}

export async function launched(client: Client): Promise<string> {
  const survey = await client.unwrap(
    client.POST('/api/v1/surveys', {
      body: { title: 'Pulse', questions: [{ id: 'nps', type: 'nps', text: 'Recommend us?' }] },
    }),
  );
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  return survey.id;
}

/** Everyone a targeting matches, by a preview (count, and the ids when there are at most 10). */
export async function preview(
  client: Client,
  surveyId: string,
  filters: unknown[],
  logic: 'AND' | 'OR' = 'AND',
): Promise<{ count: number; ids: string[] }> {
  const reply = await client.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
    params: { path: { surveyId } },
    body: { targeting: { filters: filters as never, logic } },
  });
  expect(reply.response.status, JSON.stringify(reply.error)).toBe(200);
  const result = reply.data!.data;
  return { count: result.matchedCount, ids: result.sample.map((s) => s.externalId).sort() };
}

/** `prefix`1 … `prefix`n. */
export const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

export const under = (manager: string) => ({ field: 'managerId', operator: 'under', value: manager });

/** The reference: everyone whose chain of managers (followed through existing people only) contains `manager`. */
export function below(managers: Map<string, string | null>, manager: string): string[] {
  const found: string[] = [];
  for (const id of managers.keys()) {
    const seen = new Set<string>();
    let above = managers.get(id) ?? null;
    while (above !== null && !seen.has(above)) {
      if (above === manager) {
        if (id !== manager) found.push(id);
        break;
      }
      seen.add(above);
      above = managers.has(above) ? (managers.get(above) ?? null) : null;
    }
  }
  return found.sort();
}

export async function sync(
  client: Client,
  mode: 'upsert' | 'append' | 'replace',
  respondents: object[],
  dryRun = false,
) {
  const accepted = await client.unwrap(
    client.POST('/api/v1/respondents/sync', { body: { mode, dryRun, respondents: respondents as never } }),
  );
  return waitForSyncJob(client, accepted.jobId, { initialDelayMs: 100, maxDelayMs: 300, timeoutMs: 60_000 });
}

/** `respondentExternalId`'s answer to the survey's `nps` question. */
export const answer = (client: Client, surveyId: string, respondentExternalId: string, value: number) =>
  client.unwrap(
    client.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: { respondentExternalId, answers: [{ questionId: 'nps', value }] },
    }),
  );

/** Static analytics by `manager`'s tree: the whole survey's count and each row. */
export async function tree(client: Client, surveyId: string, manager: string) {
  const result = await client.unwrap(
    client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { segmentBy: 'managerTree', manager } },
    }),
  );
  return {
    whole: result.responseCount,
    rows: result.segments.map((s) => ({
      group: s.managerTreeGroup,
      value: s.value,
      responseCount: s.responseCount,
      suppressed: s.suppressed,
    })),
  };
}

export { tenantWithRaisedLimits };
export type { TestService };
