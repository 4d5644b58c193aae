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

export async function up(db: Kysely<unknown>): Promise<void> {
  const functions = readFileSync(new URL('./2026-11-29T0100_submission_in_one_call.sql', import.meta.url), 'utf8');
  await sql.raw(functions).execute(db);
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  if (rows[0]?.citus !== true) return;
  for (const signature of [recordEvent, storeResponse]) {
    await sql`select create_distributed_function(${signature}, 'p_organization_id', colocate_with := 'surveys')`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(`drop function if exists ${storeResponse}; drop function if exists ${recordEvent}`).execute(db);
}
