/**
 * A respondent's language through every way in: `PUT`, a sync (a record with a bad tag is that record's error),
 * and SCIM's `preferredLanguage` (a tag in SCIM's looser spelling is read as BCP 47; anything else is no language).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForSyncJob } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { scimTenant, user } from '../scim/scim-helpers.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe("a respondent's language", () => {
  it('is set by PUT and by a sync, and a sync record with a bad tag is that record alone', async () => {
    const { live } = await tenantWithRaisedLimits(t);
    expect((await live.respondents.upsert('L-1', { email: 'l1@example.com', language: 'pt-BR' })).language).toBe(
      'pt-BR',
    );
    expect((await live.respondents.upsert('L-1', { email: 'l1@example.com' })).language).toBeNull();

    const accepted = await live.respondents.sync({
      mode: 'upsert',
      respondents: [
        { externalId: 'L-2', email: 'l2@example.com', language: 'de' },
        { externalId: 'L-3', email: 'l3@example.com', language: 'deutsch!' },
        { externalId: 'L-4', email: 'l4@example.com', language: null },
      ],
    });
    const job = await waitForSyncJob(live, accepted.jobId, { timeoutMs: 60_000 });
    expect(job.stats).toMatchObject({ created: 2, errors: 1 });
    expect(job.errors).toEqual([expect.objectContaining({ index: 1, externalId: 'L-3', path: '/language' })]);
    expect((await live.respondents.get('L-2')).language).toBe('de');
    expect((await live.respondents.get('L-4')).language).toBeNull();

    // The same record again is unchanged (its language is part of what a sync compares).
    const again = await live.respondents.sync({
      mode: 'upsert',
      respondents: [{ externalId: 'L-2', email: 'l2@example.com', language: 'de' }],
    });
    expect((await waitForSyncJob(live, again.jobId, { timeoutMs: 60_000 })).stats).toMatchObject({ skipped: 1 });
    const changed = await live.respondents.sync({
      mode: 'upsert',
      respondents: [{ externalId: 'L-2', email: 'l2@example.com', language: 'fr' }],
    });
    expect((await waitForSyncJob(live, changed.jobId, { timeoutMs: 60_000 })).stats).toMatchObject({ updated: 1 });
    expect((await live.respondents.get('L-2')).language).toBe('fr');
  });

  it("follows SCIM's preferredLanguage", async () => {
    const tenant = await scimTenant(t);
    const all = t.client(tenant.allKey);
    const created = await tenant.live(
      'POST',
      '/Users',
      user('eva', { externalId: 'S-eva', preferredLanguage: 'de_DE' }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.preferredLanguage).toBe('de_DE');
    expect((await all.respondents.get('S-eva')).language).toBe('de-DE');
    const odd = await tenant.live('POST', '/Users', user('max', { externalId: 'S-max', preferredLanguage: '*' }));
    expect(odd.status, JSON.stringify(odd.body)).toBe(201);
    expect((await all.respondents.get('S-max')).language).toBeNull();
  });
});
