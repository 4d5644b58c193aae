/**
 * Surveys' `settings.privacy` (`identified`, `confidential` or `anonymous`), written into every stored survey's
 * settings: `anonymous` when its `settings.anonymous` was true, else `identified`, so every reader of a survey's
 * settings finds `privacy` there (the service writes both from now on, `anonymous` kept in step with it). Frozen:
 * later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

/** One connection per node on Citus, as in the migrator's other multi-shard changes (functions may follow). */
async function sequentialOnCitus(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  if (rows[0]?.citus === true) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sequentialOnCitus(db);
  await sql`
    update surveys
    set settings = settings || jsonb_build_object(
      'privacy', case when (settings ->> 'anonymous')::boolean then 'anonymous' else 'identified' end)
    where not settings ? 'privacy'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sequentialOnCitus(db);
  await sql`update surveys set settings = settings - 'privacy' where settings ? 'privacy'`.execute(db);
}
