/**
 * Key-cache announcements come from the writers, not from triggers. Frozen: later changes go into new files.
 *
 * The triggers `api_keys_changed` and `organizations_changed` sent `key:<hash>` and `org:<id>` on
 * `survey_service_keys` from the session that changed the row. Once `api_keys` is distributed and
 * `organizations` replicated (Citus), that session is the worker holding the row, while the API processes
 * LISTEN on the coordinator: the announcement would never reach them. The writers now announce the change in
 * their own transaction (modules/api-keys/announce.ts: the API's and the CLI's revocation, the CLI's plan and
 * limit changes), which behaves the same on one PostgreSQL. A change made by plain SQL is no longer announced;
 * no process trusts a cached key longer than one second anyway (modules/api-keys/key-cache.ts).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger api_keys_changed on api_keys;
    drop function survey_service_key_changed();
    drop trigger organizations_changed on organizations;
    drop function survey_service_organization_changed();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function survey_service_key_changed() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE'
         or (to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at') then
        perform pg_notify('survey_service_keys', 'key:' || old.key_hash);
      end if;
      return null;
    end $$;
    create trigger api_keys_changed after update or delete on api_keys
      for each row execute function survey_service_key_changed();
    create function survey_service_organization_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('survey_service_keys', 'org:' || old.id);
      return null;
    end $$;
    create trigger organizations_changed after update or delete on organizations
      for each row execute function survey_service_organization_changed();
  `.execute(db);
}
