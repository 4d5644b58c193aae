/** All SQL on `organizations`. Organizations are managed by operators through the admin CLI, not the API. */
import type { Db, DbOrTx } from '../../db/database.js';
import type { Plan } from '../../db/schema.js';
import { acrossTenants } from '../../db/tenant.js';
import { newId } from '../../lib/ids.js';
import { announceOrganizationChange } from '../api-keys/index.js';

export const plans: readonly Plan[] = ['FREE', 'STARTER', 'PRO', 'BUSINESS'];

export function insertOrganization(db: DbOrTx, input: { name: string; plan: Plan }) {
  return db
    .insertInto('organizations')
    .values({ id: newId('org'), name: input.name, plan: input.plan })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findOrganization(db: DbOrTx, id: string) {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listOrganizations(db: DbOrTx) {
  return acrossTenants(db, "the admin CLI's list of every organization")
    .selectFrom('organizations')
    .selectAll()
    .orderBy('created_at')
    .execute();
}

export async function countOrganizations(db: DbOrTx): Promise<number> {
  const row = await acrossTenants(db, 'the first start creates a demo organization only in an empty database')
    .selectFrom('organizations')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return row.count;
}

/** Changes a plan or limits, announced to every key cache (each cached key carries its organization's). */
export function updateOrganization(
  db: Db,
  id: string,
  changes: { plan?: Plan; rate_limit_per_minute?: number | null; rate_limit_per_day?: number | null },
) {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('organizations')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (row) await announceOrganizationChange(tx, row.id);
    return row;
  });
}
