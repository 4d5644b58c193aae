/**
 * Request-path hardening: crash-safe idempotency and key-change notifications. Frozen: later changes go into new files.
 *
 * 1. Idempotency lease: a running row names its owner and how long its claim holds. A retry may take a
 *    running key over once the lease has lapsed and no transaction holds the row (the owner crashed).
 * 2. Key-change notifications: every process caches API keys; any change that matters to authentication (a
 *    revocation, new scopes or expiry, a plan or limit change of the organization) is announced on the
 *    `survey_service_keys` channel by a trigger, whoever makes it (API, CLI, SQL), and each process drops the
 *    entry. Bookkeeping writes (`last_used_at`) are not announced.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys add column lease_owner text, add column lease_expires_at timestamptz`.execute(db);

  await sql`
    create function survey_service_key_changed() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' or (to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at') then
        perform pg_notify('survey_service_keys', 'key:' || old.key_hash);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger api_keys_changed after update or delete on api_keys for each row execute function survey_service_key_changed()`.execute(db);

  await sql`
    create function survey_service_organization_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('survey_service_keys', 'org:' || old.id);
      return null;
    end $$`.execute(db);
  await sql`create trigger organizations_changed after update or delete on organizations for each row execute function survey_service_organization_changed()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists organizations_changed on organizations`.execute(db);
  await sql`drop trigger if exists api_keys_changed on api_keys`.execute(db);
  await sql`drop function if exists survey_service_organization_changed()`.execute(db);
  await sql`drop function if exists survey_service_key_changed()`.execute(db);
  await sql`alter table idempotency_keys drop column lease_owner, drop column lease_expires_at`.execute(db);
}
