/**
 * First start on an empty database: a demo organization on the PRO plan with one LIVE and one TEST key of full
 * scope, whose values are printed once. An advisory lock keeps two processes starting together from both
 * creating one.
 */
import { sql } from 'kysely';
import type { Db } from './db/database.js';
import { insertKey } from './modules/api-keys/index.js';
import { countOrganizations, insertOrganization } from './modules/organizations/index.js';

export async function bootstrapDemoOrganization(
  db: Db,
): Promise<{ organizationId: string; liveKey: string; testKey: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('survey-service:bootstrap'))`.execute(trx);
    if ((await countOrganizations(trx)) > 0) return undefined;
    const organization = await insertOrganization(trx, { name: 'Demo organization', plan: 'PRO' });
    const live = await insertKey(trx, {
      organizationId: organization.id,
      environment: 'LIVE',
      name: 'Demo LIVE key',
      scopes: ['*'],
    });
    const test = await insertKey(trx, {
      organizationId: organization.id,
      environment: 'TEST',
      name: 'Demo TEST key',
      scopes: ['*'],
    });
    return { organizationId: organization.id, liveKey: live.key, testKey: test.key };
  });
}
