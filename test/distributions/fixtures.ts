/** Shared set-up of the distribution tests: the service with a real SMTP server, people, surveys, polling. */
import type { components } from '@survey-service/sdk';
import type { Config } from '../../server/src/config.js';
import type { Environment } from '../../server/src/db/schema.js';
import { normalize, type RespondentInput } from '../../server/src/modules/respondents/records.js';
import { writeRespondents } from '../../server/src/modules/respondents/repository.js';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits } from '../helpers/surveys.js';
import { startTestSmtp, type TestSmtp } from './smtp.js';

export type Distribution = components['schemas']['Distribution'];
export type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

export async function startWithSmtp(overrides: Partial<Config> = {}): Promise<{ t: TestService; smtp: TestSmtp }> {
  const smtp = await startTestSmtp();
  const t = await startTestService({
    smtpUrl: smtp.url,
    mailRatePerSecond: 0,
    distributionHoldRecheckSeconds: 1,
    ...overrides,
  });
  // Links point at this test server (its port is known only once it listens).
  t.service.deps.config.publicBaseUrl = t.url;
  return { t, smtp };
}

export const departments = ['Engineering', 'Sales', 'Support'] as const;

/** n people: E-000…; department by index; every 5th remote; hired in 2020 + i % 5. */
export function people(n: number, prefix = 'E'): RespondentInput[] {
  return Array.from({ length: n }, (_, i) => ({
    externalId: `${prefix}-${String(i).padStart(4, '0')}`,
    email: `${prefix.toLowerCase()}${i}@example.com`,
    firstName: `Person${i}`,
    lastName: 'Tester',
    department: departments[i % 3],
    location: i % 2 === 0 ? 'Berlin' : 'London',
    hireDate: `${2020 + (i % 5)}-03-15`,
    employmentType: 'full_time',
    attributes: { remote: i % 5 === 0, level: i % 4 },
  }));
}

export async function insertPeople(
  t: TestService,
  organizationId: string,
  records: RespondentInput[],
  environment: Environment = 'LIVE',
): Promise<void> {
  for (let i = 0; i < records.length; i += 5000) {
    await writeRespondents(t.db, { organizationId, environment }, records.slice(i, i + 5000).map(normalize), 'upsert');
  }
}

export async function tenant(t: TestService) {
  return tenantWithRaisedLimits(t);
}

export async function activeSurvey(
  client: Client,
  overrides: Partial<components['schemas']['SurveyCreate']> = {},
): Promise<string> {
  const created = await client.unwrap(client.POST('/api/v1/surveys', { body: surveyBody(overrides) }));
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: created.id } } }));
  return created.id;
}

export async function getDistribution(client: Client, surveyId: string, distributionId: string): Promise<Distribution> {
  return client.unwrap(
    client.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
      params: { path: { surveyId, distributionId } },
    }),
  );
}

export async function waitForStatus(
  client: Client,
  surveyId: string,
  distributionId: string,
  statuses: Distribution['status'][],
  timeoutMs = 30_000,
): Promise<Distribution> {
  let last: Distribution | undefined;
  return eventually(
    async () => {
      last = await getDistribution(client, surveyId, distributionId);
      return statuses.includes(last.status) && last;
    },
    timeoutMs,
    () => `distribution ${distributionId} to be ${statuses.join('/')} (it is ${last?.status})`,
    100,
  );
}

export async function allRecipients(client: Client, surveyId: string, distributionId: string) {
  const out: components['schemas']['DistributionRecipient'][] = [];
  for await (const r of client.paginate('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
    params: { path: { surveyId, distributionId } },
  } as never)) {
    out.push(r as components['schemas']['DistributionRecipient']);
  }
  return out;
}

/** The answer page an embed distribution's snippet frames (its iframe's `src`). */
export const embedUrl = (distribution: { embedCode?: string | null }) =>
  distribution.embedCode!.match(/src="([^"]+)"/)![1]!;
