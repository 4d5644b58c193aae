/**
 * Kiosk distributions: each recipient gets a short access code to type at `/k` (distributions/access-codes.ts says
 * how a code is made). Frozen: later changes go into new files.
 *
 * - `distributions.method` may be `kiosk`; a kiosk distribution keeps its code prefix in `kiosk_prefix`.
 * - `distribution_recipients.access_code_hash`: the keyed hash of the recipient's code (kiosk only), and
 *   `access_code_round`, which is 0 unless the recipient's first code collided with another's of the same
 *   distribution. Looked up by the tenant-led index `(organization_id, environment, distribution_id,
 *   access_code_hash)`.
 * - `kiosk_prefixes`: prefix → tenant and distribution, what `/k` reads first, before it knows the tenant. A
 *   reference table on Citus (a copy on every node, like `api_keys`, which authentication reads the same way), so
 *   that read is local instead of a fan-out; one row per kiosk distribution, written when it is created. It points
 *   to `organizations` (also a reference table) and goes with it; a prefix outlives its distribution, on purpose, so
 *   that it is never drawn again.
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`alter table distributions drop constraint distributions_method_check`.execute(db);
  await sql`alter table distributions add constraint distributions_method_check
    check (method in ('email', 'link', 'embed', 'kiosk'))`.execute(db);
  await sql`alter table distributions add column kiosk_prefix text`.execute(db);
  await sql`alter table distribution_recipients add column access_code_hash bytea`.execute(db);
  await sql`alter table distribution_recipients add column access_code_round smallint not null default 0`.execute(db);
  await sql`create index distribution_recipients_access_code on distribution_recipients
    (organization_id, environment, distribution_id, access_code_hash) where access_code_hash is not null`.execute(db);
  await sql`
    create table kiosk_prefixes (
      prefix text not null,
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      distribution_id text not null,
      created_at timestamptz not null default now(),
      constraint kiosk_prefixes_pk primary key (prefix)
    )`.execute(db);
  if (citus) await sql`select create_reference_table('kiosk_prefixes')`.execute(db);
  // The key comes once the table has its place on Citus (a local table cannot point at a reference table).
  await sql`alter table kiosk_prefixes add constraint kiosk_prefixes_organization
    foreign key (organization_id) references organizations (id) on delete cascade`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Sequential on Citus, so that the migrator's later steps in the same transaction may still change functions.
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`drop table kiosk_prefixes`.execute(db);
  await sql`drop index distribution_recipients_access_code`.execute(db);
  await sql`alter table distribution_recipients drop column access_code_round`.execute(db);
  await sql`alter table distribution_recipients drop column access_code_hash`.execute(db);
  // Going back has no kiosk method: its distributions (and their recipients, by the foreign key) go.
  await sql`delete from distributions where method = 'kiosk'`.execute(db);
  await sql`alter table distributions drop column kiosk_prefix`.execute(db);
  await sql`alter table distributions drop constraint distributions_method_check`.execute(db);
  await sql`alter table distributions add constraint distributions_method_check
    check (method in ('email', 'link', 'embed'))`.execute(db);
}
