/**
 * A small organization where one person, Ada (E-1), left data everywhere the service keeps any: a respondent record
 * and its SCIM user, invitations with personal links (an identified and an anonymous survey), responses to an
 * identified, a confidential and an anonymous survey, a sync error naming her, events and webhook deliveries to an
 * endpoint that echoes what it receives, a CSV export and an AI analysis. Bob (E-2) and six others answer the
 * same surveys, so that nothing of theirs may show in Ada's file, and a "twin" organization holds the same data
 * without Ada's responses, to compare figures with after her erasure.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { components, SurveyServiceClient } from '@survey-service/sdk';
import { expect } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

export type PrivacyRequest = components['schemas']['PrivacyRequest'];
export type AccessFile = components['schemas']['PrivacyRequestAccessFile'];
type QuestionInput = components['schemas']['QuestionInput'];

export const questions: QuestionInput[] = [
  { type: 'nps', text: 'How likely are you to recommend working here?' },
  { type: 'rating', text: 'My workload is manageable', min: 1, max: 5 },
  {
    type: 'single_choice',
    text: 'Where do you work most days?',
    required: false,
    choices: [{ label: 'Office' }, { label: 'Home' }, { label: 'Hybrid' }],
  },
  { type: 'text', text: 'What would you change?', required: false, maxLength: 500 },
];

export interface Person {
  externalId: string;
  email: string;
  firstName: string;
  lastName: string;
  department: string;
}

export const ada: Person = {
  externalId: 'E-1',
  email: 'ada.lovelace@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  department: 'Engineering',
};
export const bob: Person = {
  externalId: 'E-2',
  email: 'bob.stone@example.com',
  firstName: 'Bob',
  lastName: 'Stone',
  department: 'Sales',
};
const others: Person[] = Array.from({ length: 6 }, (_, i) => ({
  externalId: `E-${i + 3}`,
  email: `person${i + 3}@example.com`,
  firstName: `Person${i + 3}`,
  lastName: 'Tester',
  department: i % 2 === 0 ? 'Engineering' : 'Sales',
}));
export const everyone = [ada, bob, ...others];

/** What each person writes; Ada's and Bob's words are their own, so a trace of either is easy to find. */
export const comments: Record<string, string> = {
  'E-1': 'Too many meetings: the quarterly planning marathon drains Ada every time.',
  'E-2': 'Too many meetings, and the Tuesday pipeline review with Bob could be an email.',
  'E-3': 'Too many meetings leave no focus time for real work.',
  'E-4': 'Too many meetings every week, please cut the recurring ones.',
  'E-5': 'The workload is heavy and there are too many meetings.',
  'E-6': 'Too many meetings and not enough focus time.',
  'E-7': 'Fewer meetings would help; too many meetings overall.',
  'E-8': 'Too many meetings in the afternoon make the workload hard.',
};

export function answersOf(person: Person, i: number): components['schemas']['Answer'][] {
  return [
    { questionId: 'q_1', value: (i * 3) % 11 },
    { questionId: 'q_2', value: 1 + (i % 5) },
    { questionId: 'q_3', value: `c_${1 + (i % 3)}` },
    { questionId: 'q_4', value: comments[person.externalId]! },
  ];
}

const form = (fields: Array<[string, string]>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

export type Client = SurveyServiceClient;

/** A webhook endpoint that answers each delivery with its own body: its `responseExcerpt` then holds the payload. */
export interface EchoEndpoint {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

export async function startEcho(): Promise<EchoEndpoint> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function survey(client: Client, privacy: 'identified' | 'confidential' | 'anonymous', title: string) {
  const created = await client.unwrap(
    client.POST('/api/v1/surveys', { body: { title, questions, settings: { privacy } } }),
  );
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: created.id } } }));
  return created.id;
}

async function putPeople(client: Client, people: readonly Person[]) {
  for (const p of people) {
    const { externalId, ...fields } = p;
    await client.unwrap(
      client.PUT('/api/v1/respondents/{externalId}', {
        params: { path: { externalId } },
        body: { ...fields, location: 'London', hireDate: '2019-04-01', employmentType: 'full_time' },
      }),
    );
  }
}

async function linkDistribution(client: Client, surveyId: string) {
  const d = await client.unwrap(
    client.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: { method: 'link' } },
    }),
  );
  await client.distributions.wait(surveyId, d.id, { initialDelayMs: 50, maxDelayMs: 200, timeoutMs: 30_000 });
  const links = new Map<string, string>();
  for await (const r of client.paginate('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
    params: { path: { surveyId, distributionId: d.id } },
  } as never)) {
    const recipient = r as components['schemas']['DistributionRecipient'];
    links.set(recipient.respondentExternalId, recipient.link);
  }
  return { id: d.id, links };
}

async function submit(client: Client, surveyId: string, people: readonly Person[]) {
  const ids = new Map<string, string>();
  for (const p of people) {
    const response = await client.unwrap(
      client.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: { respondentExternalId: p.externalId, answers: answersOf(p, everyone.indexOf(p)) },
      }),
    );
    ids.set(p.externalId, response.id);
  }
  return ids;
}

/** Waits until no webhook delivery is pending (so that what endpoints received is settled). */
export async function deliveriesSettled(t: TestService, organizationId: string): Promise<void> {
  let pending = 0;
  await eventually(
    async () => {
      const { n } = await t.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      pending = Number(n);
      return pending === 0;
    },
    30_000,
    () => `no webhook delivery pending (${pending} still are)`,
  );
}

export interface World {
  organizationId: string;
  live: Client;
  key: string;
  receiver: EchoEndpoint;
  webhookId: string;
  identified: string;
  confidential: string;
  anonymous: string;
  /** Response ids by survey and externalId. */
  responses: { identified: Map<string, string>; confidential: Map<string, string> };
  exportId: string;
  analysisId: string;
}

export async function buildWorld(t: TestService): Promise<World> {
  // Personal links point at this test server (its port is known only once it listens).
  t.service.deps.config.publicBaseUrl = t.url;
  const tenant = await tenantWithRaisedLimits(t);
  const live = tenant.live;
  const receiver = await startEcho();
  const webhook = await live.unwrap(live.POST('/api/v1/webhooks', { body: { url: receiver.url, events: ['*'] } }));
  await putPeople(live, everyone);

  const identified = await survey(live, 'identified', 'Engagement pulse');
  const confidential = await survey(live, 'confidential', 'Manager feedback');
  const anonymous = await survey(live, 'anonymous', 'Anonymous check-in');
  await linkDistribution(live, identified);
  const anonymousLinks = await linkDistribution(live, anonymous);

  const identifiedIds = await submit(live, identified, everyone);
  const confidentialIds = await submit(live, confidential, everyone.slice(0, 6));
  // Ada and Bob answer the anonymous survey through their personal links: their invitations say they answered.
  for (const p of [ada, bob]) {
    const answered = await fetch(
      anonymousLinks.links.get(p.externalId)!,
      form([
        ['q_1', '7'],
        ['q_2', '3'],
        ['q_3', 'c_2'],
        ['q_4', `Anonymous words of ${p.firstName}`],
      ]),
    );
    expect(answered.status).toBe(200);
  }

  // A sync whose one record is refused: its error (and the sync's event) names Ada.
  const sync = await live.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 'E-1', email: 'nope' }] });
  const synced = await live.respondents.waitForSync(sync.jobId, { initialDelayMs: 50, timeoutMs: 30_000 });
  expect(synced.errors.map((e) => e.externalId)).toEqual(['E-1']);

  const exported = await live.unwrap(
    live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: identified } },
      body: { format: 'csv' },
    }),
  );
  const file = await live.exports.wait(exported.id, { initialDelayMs: 50, timeoutMs: 60_000 });
  expect(file.status).toBe('completed');

  const analysis = await live.unwrap(
    live.POST('/api/v1/surveys/{id}/analytics/ai/generate', { params: { path: { id: identified } }, body: {} }),
  );
  const analysed = await live.analytics.ai.wait(identified, analysis.id, { initialDelayMs: 50, timeoutMs: 60_000 });
  expect(analysed.status).toBe('completed');
  await deliveriesSettled(t, tenant.organizationId);

  return {
    organizationId: tenant.organizationId,
    live,
    key: tenant.liveKey,
    receiver,
    webhookId: webhook.id,
    identified,
    confidential,
    anonymous,
    responses: { identified: identifiedIds, confidential: confidentialIds },
    exportId: exported.id,
    analysisId: analysis.id,
  };
}

/** The same people and the same identified survey's responses as the world, without Ada's response. */
export async function buildTwin(t: TestService): Promise<{ live: Client; identified: string }> {
  const tenant = await tenantWithRaisedLimits(t);
  await putPeople(tenant.live, everyone.slice(1));
  const identified = await survey(tenant.live, 'identified', 'Engagement pulse');
  await submit(tenant.live, identified, everyone.slice(1));
  return { live: tenant.live, identified };
}

/** The SDK's helper, polling often (the jobs take a second or less here). */
export function waitForRequest(client: Client, id: string): Promise<PrivacyRequest> {
  return client.privacy.requests.wait(id, { initialDelayMs: 50, maxDelayMs: 200, timeoutMs: 60_000 });
}

/** Everything a list operation returns, as one JSON text (to look for traces of a person in it). */
export async function allOf(iterable: AsyncIterable<unknown>): Promise<string> {
  const items: unknown[] = [];
  for await (const item of iterable) items.push(item);
  return JSON.stringify(items);
}
