/**
 * A submission as one function call (`store_response`) and the one event writer (`record_event`), both in the
 * sibling `.sql` file, which says why. Frozen: later changes go into new files.
 *
 * On Citus both functions are distributed by `p_organization_id` and co-located with `surveys`, so that a call
 * made outside a transaction block is delegated whole to the node holding the organization's shards (Citus
 * "distributed functions"), and the functions exist on every node. A call inside a transaction block is not
 * delegated: it runs on the coordinator, each of its statements routed to the tenant's node.
 */
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';

const storeResponse =
  'store_response(text, text, text, text, text, text, jsonb, timestamptz, text, text, jsonb, text, text, bytea, boolean)';
const recordEvent = 'record_event(text, text, text, text, jsonb)';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  // Function commands on Citus need the transaction's earlier distributed work to have been sequential.
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  const functions = readFileSync(new URL('./2026-11-29T0100_submission_in_one_call.sql', import.meta.url), 'utf8');
  await sql.raw(functions).execute(db);
  if (!citus) return;
  for (const signature of [recordEvent, storeResponse]) {
    await sql`select create_distributed_function(${signature}, 'p_organization_id', colocate_with := 'surveys')`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql.raw(`drop function if exists ${storeResponse}; drop function if exists ${recordEvent}`).execute(db);
}
