/** Respondent records for sync tests. */
import { waitForSyncJob } from '@survey-service/sdk';
import type { TestService } from '../helpers/service.js';

export interface RecordOptions {
  prefix?: string;
  department?: string;
}

/** `count` valid records `E-<prefix><i>`, deterministic. */
export function people(count: number, options: RecordOptions = {}): Array<Record<string, unknown>> {
  const prefix = options.prefix ?? '';
  return Array.from({ length: count }, (_, i) => ({
    externalId: `E-${prefix}${i}`,
    email: `person${prefix}${i}@example.com`,
    firstName: `First${i}`,
    lastName: `Last${i}`,
    department: options.department ?? ['Engineering', 'Sales', 'Support'][i % 3],
    location: ['London', 'Paris', 'Berlin', 'Lisbon'][i % 4],
    jobTitle: 'Engineer',
    managerId: i === 0 ? null : `E-${prefix}0`,
    hireDate: `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`,
    employmentType: (['full_time', 'part_time', 'contractor'] as const)[i % 3],
    attributes: { costCenter: `CC-${i % 7}`, remote: i % 2 === 0, level: i % 5 },
  }));
}

type Client = ReturnType<TestService['client']>;

export async function sync(
  client: Client,
  mode: 'upsert' | 'replace' | 'append',
  respondents: unknown[],
  dryRun = false,
) {
  const accepted = await client.unwrap(
    client.POST('/api/v1/respondents/sync', {
      body: { mode, dryRun, respondents: respondents as Array<Record<string, never>> },
    }),
  );
  const job = await waitForSyncJob(client, accepted.jobId, { initialDelayMs: 100, maxDelayMs: 500, timeoutMs: 60_000 });
  return { accepted, job };
}

export async function countRespondents(
  t: TestService,
  organizationId: string,
  environment: 'LIVE' | 'TEST' = 'LIVE',
): Promise<number> {
  const row = await t.db
    .selectFrom('respondents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
