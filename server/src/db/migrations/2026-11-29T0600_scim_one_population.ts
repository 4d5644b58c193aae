/**
 * Every respondent is a SCIM user, and a user keeps every e-mail address a SCIM client sends. Frozen: later changes
 * go into new files.
 *
 * - `scim_users.emails`: the user's addresses as SCIM shows them (`[{ value, type?, primary, display? }]`). The
 *   address the respondent keeps in `respondents.email` (what distributions use) is the one `scim_designated_email`
 *   picks: the primary one, else the first `work` one, else the first; none when the list is empty, and only then.
 * - The `scim_users` row exists for every respondent. From now on the respondents' one writer keeps it
 *   (modules/respondents/scim-users.ts: a set of statements per write, beside the respondents it writes, using
 *   `scim_emails_with` when an HR system changes an address); respondents written before this migration get their
 *   row here, named by the e-mail address, else (the address is another user's userName) by the externalId, else by
 *   the id, and SCIM users their one address as they were shown it.
 * - The foreign key of 2026-11-28T0310 goes: its check of each new user cost most of what writing the user costs
 *   (a lock on the respondent's row, row by row), and the writer deletes a respondent's user with it.
 *
 * Row triggers on `respondents` did this job first, before this migration was released: on Citus each of their
 * statements, run for every row, went through the distributed planner on the worker, and a sync of 20,000 people
 * took 9.8 s instead of 1.5 s (a replace deleting 19,990, 3.9 s instead of 0.13 s).
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  }
  await sql`alter table scim_users add column emails jsonb not null default '[]'::jsonb`.execute(db);
  // One statement per query: Citus propagates each DDL statement to the workers with the text it came in.
  await sql`
    create function scim_user_id(p_at timestamptz, p_seed bytea) returns text
    language plpgsql immutable parallel safe
    as $$
    -- A user id as lib/ids.ts makes them: usr_, 10 characters of milliseconds and 16 of p_seed's first 16 bytes,
    -- in Crockford base32, so that ids sort by creation time.
    declare
      alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
      ms bigint := floor(extract(epoch from p_at) * 1000);
      id text := '';
    begin
      for i in 1..10 loop
        id := substr(alphabet, (ms % 32)::int + 1, 1) || id;
        ms := ms / 32;
      end loop;
      for i in 0..15 loop
        id := id || substr(alphabet, (get_byte(p_seed, i) & 31) + 1, 1);
      end loop;
      return 'usr_' || id;
    end $$`.execute(db);
  await sql`
    create function scim_designated_email(p_emails jsonb) returns int
    language sql immutable parallel safe
    as $$
    -- The position (from 1) of the address the respondent keeps: the primary one, else the first of type work
    -- (any case), else the first; null for no address. modules/scim/user.ts designatedEmail decides the same.
    select coalesce(
      (select min(i) from jsonb_array_elements(p_emails) with ordinality as e(v, i) where e.v -> 'primary' = 'true'),
      (select min(i) from jsonb_array_elements(p_emails) with ordinality as e(v, i) where lower(e.v ->> 'type') = 'work'),
      case when jsonb_array_length(p_emails) > 0 then 1 end)::int
    $$`.execute(db);
  await sql`
    create function scim_emails_with(p_emails jsonb, p_email text) returns jsonb
    language sql immutable parallel safe
    as $$
    -- The addresses once the respondent's writer set its e-mail to p_email (see the migration's comment); unchanged
    -- when the designated address is p_email already.
    with designated as (select scim_designated_email(p_emails) as at),
    listed as (
      select min(i) as at from jsonb_array_elements(p_emails) with ordinality as e(v, i)
      where lower(e.v ->> 'value') = lower(p_email))
    select case
      when p_email is null then '[]'::jsonb
      when listed.at = designated.at then
        jsonb_set(p_emails, array[(listed.at - 1)::text, 'value'], to_jsonb(p_email))
      when listed.at is not null then
        (select jsonb_agg(case when i = listed.at then e.v || jsonb_build_object('value', p_email, 'primary', true)
            else e.v || '{"primary": false}'::jsonb end order by i)
         from jsonb_array_elements(p_emails) with ordinality as e(v, i))
      when designated.at is null then
        jsonb_build_array(jsonb_build_object('value', p_email, 'type', 'work', 'primary', true))
      else jsonb_set(p_emails, array[(designated.at - 1)::text, 'value'], to_jsonb(p_email))
    end
    from designated, listed
    $$`.execute(db);
  await sql`alter table scim_users drop constraint scim_users_respondent`.execute(db);

  // SCIM users made before: their one address, as they were shown it.
  await sql`
    update scim_users s set emails = scim_emails_with('[]'::jsonb, r.email)
    from respondents r
    where r.organization_id = s.organization_id and r.environment = s.environment and r.external_id = s.external_id`.execute(
    db,
  );
  // Respondents without a user: the writer's names, tried in its order, each pass taking what is still free. The
  // ids are made from each respondent's key and creation time (no volatile function, which Citus would not push
  // down to the shards).
  for (const userName of [sql`coalesce(r.email, r.external_id)`, sql`r.external_id`, sql`null`]) {
    await sql`
      insert into scim_users (organization_id, environment, id, external_id, user_name, emails, created_at)
      select r.organization_id, r.environment, u.id, r.external_id, coalesce(${userName}, u.id),
        scim_emails_with('[]'::jsonb, r.email), r.created_at
      from respondents r
        cross join lateral (select scim_user_id(r.created_at,
          decode(md5(r.organization_id || '/' || r.environment || '/' || r.external_id), 'hex')) as id) u
      where not exists (select 1 from scim_users s where s.organization_id = r.organization_id
        and s.environment = r.environment and s.external_id = r.external_id)
      on conflict do nothing`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Sequential on Citus, so that the migrator's later steps in the same transaction may still change functions.
  if (await onCitus(db)) {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  }
  await sql`alter table scim_users add constraint scim_users_respondent foreign key (organization_id, environment, external_id)
    references respondents (organization_id, environment, external_id) on delete cascade`.execute(db);
  await sql`drop function scim_emails_with(jsonb, text)`.execute(db);
  await sql`drop function scim_designated_email(jsonb)`.execute(db);
  await sql`drop function scim_user_id(timestamptz, bytea)`.execute(db);
  // The users the writer and the backfill added stay: they were respondents' users, as SCIM users are.
  await sql`alter table scim_users drop column emails`.execute(db);
}
