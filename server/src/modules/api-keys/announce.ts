/**
 * Announcements to every process's key cache (key-cache.ts) on the `survey_service_keys` channel: `key:<hash>`
 * when a key changes in a way that matters to authentication (a revocation), `org:<id>` when an organization's
 * plan or limits change. The writer of the change sends it in its own transaction, so it is delivered at commit
 * and not at all on rollback. It is a statement of its own that reads no table, so it runs in the session of
 * the writer on the database the API processes LISTEN on (on Citus, the coordinator, whichever worker holds the
 * rows); a trigger on the table would notify from the node holding the row instead.
 */
import { sql } from 'kysely';
import type { DbOrTx } from '../../db/database.js';

export const keyChannel = 'survey_service_keys';

export async function announceKeyChange(db: DbOrTx, keyHash: string): Promise<void> {
  await sql`select pg_notify(${keyChannel}, ${`key:${keyHash}`})`.execute(db);
}

export async function announceOrganizationChange(db: DbOrTx, organizationId: string): Promise<void> {
  await sql`select pg_notify(${keyChannel}, ${`org:${organizationId}`})`.execute(db);
}
