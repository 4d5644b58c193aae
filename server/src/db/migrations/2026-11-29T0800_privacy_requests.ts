/**
 * Data-subject requests (modules/privacy): access and erasure of one person's data. Frozen: later changes go into
 * new files.
 *
 * - `privacy_requests`: one row per request, kept 3 years as the record that it was answered. The subject's
 *   identifier (`subject_value`) is kept only while the request is pending or processing: a check refuses a
 *   finished request that still holds it, so no code path can leave personal data in the record. What stays is the
 *   kind of identifier, a random salt and the SHA-256 of salt and identifier (`subject_hash`), the inventory and
 *   the webhook recipients (counts, ids and URLs).
 * - `privacy_request_files`: an access request's file (one JSON document per request, a few kilobytes to a few
 *   megabytes), uncompressed (`storage external`) so that a byte range is read with `substring`. Deleted 7 days
 *   after completion by the clean-up, or at once by an erasure of the same person (`file_erased_at` and
 *   `file_erased_by`, the erasing request, on the request).
 * - `exports.file_erased_at` and `file_erased_by`: when and by which request an erasure deleted an export's file
 *   because it held the erased person's responses, so that its download answers 410 `export_erased` instead of
 *   `export_expired`.
 *
 * Both tables are keyed by tenant first, and on Citus distributed by `organization_id` and co-located with
 * `surveys`, so a request's whole job (one transaction over the tenant's rows) runs on the tenant's node.
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
  await sql`
    create table privacy_requests (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      id text not null,
      type text not null check (type in ('access', 'erasure')),
      scope text check (scope in ('identity', 'identity_and_responses')),
      dry_run boolean not null default false,
      status text not null check (status in ('pending', 'processing', 'completed', 'failed')),
      subject_kind text not null check (subject_kind in ('externalId', 'email')),
      subject_value text,
      subject_salt bytea not null,
      subject_hash text not null,
      inventory jsonb,
      webhook_recipients jsonb not null default '[]',
      error text,
      attempts integer not null default 0,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      completed_at timestamptz,
      file_size bigint,
      file_expires_at timestamptz,
      file_deleted_at timestamptz,
      file_erased_at timestamptz,
      file_erased_by text,
      constraint privacy_requests_pk primary key (organization_id, environment, id),
      constraint privacy_requests_scope check ((type = 'erasure') = (scope is not null)),
      constraint privacy_requests_subject_forgotten
        check (status in ('pending', 'processing') or subject_value is null)
    )`.execute(db);
  await sql`create index privacy_requests_by_tenant
    on privacy_requests (organization_id, environment, created_at desc, id desc)`.execute(db);
  await sql`
    create table privacy_request_files (
      organization_id text not null,
      environment text not null,
      request_id text not null,
      data bytea not null,
      constraint privacy_request_files_pk primary key (organization_id, environment, request_id)
    )`.execute(db);
  await sql`alter table privacy_request_files alter column data set storage external`.execute(db);
  await sql`alter table exports add column file_erased_at timestamptz`.execute(db);
  await sql`alter table exports add column file_erased_by text`.execute(db);
  if (citus) {
    for (const table of ['privacy_requests', 'privacy_request_files']) {
      await sql`select create_distributed_table(${table}, 'organization_id', colocate_with => 'surveys')`.execute(db);
    }
  }
  // The keys come once the tables have their place on Citus (a local table cannot point at a distributed one).
  await sql`alter table privacy_requests add constraint privacy_requests_organization
    foreign key (organization_id) references organizations (id) on delete cascade`.execute(db);
  await sql`alter table privacy_request_files add constraint privacy_request_files_request
    foreign key (organization_id, environment, request_id)
    references privacy_requests (organization_id, environment, id) on delete cascade`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Sequential on Citus, so that the migrator's later steps in the same transaction may still change functions.
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`alter table exports drop column file_erased_by`.execute(db);
  await sql`alter table exports drop column file_erased_at`.execute(db);
  await sql`drop table privacy_request_files`.execute(db);
  await sql`drop table privacy_requests`.execute(db);
}
