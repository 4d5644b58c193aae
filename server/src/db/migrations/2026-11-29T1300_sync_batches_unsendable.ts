/**
 * `held` is a distribution's status (sending waits for a review); a sync batch's errors of the records JSON could not
 * carry are `unsendable`, so that each word means one thing. A rename only: no row is rewritten. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_job_batches rename column held to unsendable`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_job_batches rename column unsendable to held`.execute(db);
}
