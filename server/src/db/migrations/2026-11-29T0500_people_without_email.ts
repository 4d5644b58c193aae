/**
 * People without an e-mail address (frontline staff with no work address) are respondents like any other: they are
 * reached by personal link, QR code or kiosk code. `respondents.email` and the recipients' copy of it may be null,
 * and an e-mail distribution counts the people it skipped for having none (`no_email_count`, recipients with status
 * `no_email`). Frozen: later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

/** One connection per node on Citus, as in the migrator's other multi-shard changes. */
async function sequentialOnCitus(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  if (rows[0]?.citus === true) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sequentialOnCitus(db);
  await sql`alter table respondents alter column email drop not null`.execute(db);
  await sql`alter table distribution_recipients alter column email drop not null`.execute(db);
  await sql`alter table distributions add column no_email_count integer not null default 0`.execute(db);
  await sql`alter table distribution_recipients drop constraint distribution_recipients_status_check`.execute(db);
  await sql`alter table distribution_recipients add constraint distribution_recipients_status_check
    check (status in ('pending', 'sent', 'failed', 'bounced', 'unsubscribed', 'no_email', 'responded'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sequentialOnCitus(db);
  await sql`alter table distributions drop column no_email_count`.execute(db);
  await sql`alter table distribution_recipients drop constraint distribution_recipients_status_check`.execute(db);
  // Going back needs an address for everyone: people without one cannot be kept by the older schema.
  await sql`delete from distribution_recipients where email is null`.execute(db);
  await sql`delete from respondents where email is null`.execute(db);
  await sql`alter table distribution_recipients alter column email set not null`.execute(db);
  await sql`alter table respondents alter column email set not null`.execute(db);
  await sql`alter table distribution_recipients add constraint distribution_recipients_status_check
    check (status in ('pending', 'sent', 'failed', 'bounced', 'unsubscribed', 'responded'))`.execute(db);
}
