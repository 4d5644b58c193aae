/**
 * Every trigger function, rewritten to be read. Frozen: later changes go into new files.
 *
 * Until now the PL/pgSQL trigger functions existed only as text assembled by TypeScript string builders inside the
 * migrations that created them (2026-11-24T0200_idempotency_lease, 2026-11-24T0500_exports,
 * 2026-11-25T0800_segments_when_asked), so their current text could be read only from a database. The sibling
 * file `2026-11-26T0100_readable_trigger_functions.sql` holds `create or replace function` for each of them, laid
 * out one clause per line and commented; this migration runs it. Behaviour is unchanged: same names, signatures,
 * language and attributes, and the same statements token for token (only whitespace and comments differ); the
 * triggers themselves are not touched. docs/schema.sql (`npm run generate`) shows the result.
 *
 * The migration folder's provider (../migrate.ts) loads only `.ts`/`.js` files, so the `.sql` file is not taken
 * for a migration of its own.
 */
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const functions = readFileSync(new URL('./2026-11-26T0100_readable_trigger_functions.sql', import.meta.url), 'utf8');
  // Several statements in one query without parameters (node-postgres sends it as a simple query), inside the
  // Migrator's transaction like every migration.
  await sql.raw(functions).execute(db);
}

export async function down(_db: Kysely<unknown>): Promise<void> {
  // Nothing to undo: the functions behave as before, and their previous text is in the earlier migrations (whose
  // own `down` drops or replaces them).
}
