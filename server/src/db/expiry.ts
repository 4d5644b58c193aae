/** The retention sweeps' one delete loop. */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import { acrossTenants } from './tenant.js';

const SLICE = 5000;

/**
 * Deletes the rows of `table` (keyed by organization, environment and id) that `expired` selects, across tenants,
 * in slices of 5,000 so that no transaction grows large; returns how many went. `why` says which sweep it is.
 */
export async function deleteExpiredInSlices(
  db: Db,
  table: 'events' | 'audit_log',
  expired: RawBuilder<unknown>,
  why: string,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await sql`
      delete from ${sql.table(table)} where (organization_id, environment, id) in (
        select organization_id, environment, id from ${sql.table(table)} where ${expired} limit ${sql.lit(SLICE)})`.execute(
      acrossTenants(db, why),
    );
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < SLICE) return deleted;
  }
}
