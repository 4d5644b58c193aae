/**
 * Every respondent is a SCIM user, however it was written, and a user keeps every e-mail address a SCIM client
 * sends. Frozen: later changes go into new files.
 *
 * - `scim_users.emails`: the user's addresses as SCIM shows them (`[{ value, type?, primary, display? }]`). The
 *   address the respondent keeps in `respondents.email` (what distributions use) is the one `scim_designated_email`
 *   picks: the primary one, else the first `work` one, else the first; none when the list is empty, and only then.
 * - The `scim_users` row exists for every respondent: a trigger on `respondents` adds it for each respondent inserted
 *   — by `PUT /respondents/{externalId}`, a sync, SCIM or any SQL — with a new `usr_…` id, the addresses
 *   `[{ value: email, type: "work", primary: true }]` (or none) and the `userName` the e-mail address, else the
 *   externalId (when the address is another user's userName), else the id. A respondent SCIM creates already has
 *   the row SCIM wrote.
 * - A second trigger keeps the list in step when a respondent's `email` is changed by its writer (a `PUT` or a sync):
 *   the designated address takes the new value (or, when the new value is already in the list, that address becomes
 *   the primary one); a null `email` empties the list, since any address left would become the one distributions
 *   use at the next SCIM write.
 * - Respondents written before this migration get their row here (the same userName rule), and SCIM users their
 *   one address as they were shown it.
 * - A user goes with its respondent by a trigger instead of the foreign key of 2026-11-28T0310 (see `up`).
 *
 * Both triggers are deferred to the commit, and read the respondent as it is then. userName is unique, and a
 * transaction that inserts a name another one has inserted but not committed waits for it: the parallel batches of
 * a sync, each naming its new people while it writes them, would wait for each other over a shared address — in a
 * circle, or while the later batch waits for the earlier one's commit (respondents/hierarchy.ts), for ever. Every
 * other writer of a tenant's respondents excludes them and each other (the hierarchy's lock), and the batches of a
 * sync commit one at a time, so at the commit no other transaction holds a name the trigger may need. Row triggers,
 * not statement triggers: on Citus a statement trigger's transition table cannot be planned once the tables it
 * writes are distributed, while each statement of these names the row's tenant and runs on the shard's own node
 * (`citus.enable_unsafe_triggers` is needed to create them, and is safe: they touch only the co-located row of
 * `scim_users`). The functions exist on every node (Citus propagates them as they are created).
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
    await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
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
  await sql`
    create function scim_statistics_for(p_respondents regclass) returns void
    language plpgsql
    as $$
    -- Once per transaction: analyzes p_respondents (the table the trigger fires on: respondents, or its shard on a
    -- Citus node) and scim_users (or its co-located shard) when one has grown tenfold since its statistics were
    -- taken, or has none and more than a few rows (a new database, a first sync). With statistics of a table much
    -- smaller, the planner sees lookups by the whole key as equally cheap through every index that leads with the
    -- tenant, and may take another than the key's: each of these triggers' lookups then reads the whole tenant, and
    -- a first sync's batch of 5,000 reads 12 million index entries (a replace that deletes 20,000, 200 million). Run
    -- in the transaction, ANALYZE counts its own rows, and the plans made before it are made again.
    declare
      v_scim_users regclass := 'scim_users'::regclass;
      v_table regclass;
    begin
      if current_setting('survey_service.scim_statistics', true) is not distinct from 'checked' then return; end if;
      perform set_config('survey_service.scim_statistics', 'checked', true);
      if exists (select 1 from pg_extension where extname = 'citus') then
        -- The shard of scim_users co-located with this shard of respondents: the one of the same hash range.
        select to_regclass(format('%I.%I', n.nspname, 'scim_users_' || s.shardid)) into v_scim_users
        from pg_class c
          join pg_namespace n on n.oid = c.relnamespace
          join pg_dist_shard r on r.shardid = substring(c.relname from '_([0-9]+)$')::bigint
          join pg_dist_shard s on s.logicalrelid = 'scim_users'::regclass and s.shardminvalue = r.shardminvalue
        where c.oid = p_respondents;
      end if;
      foreach v_table in array array_remove(array[p_respondents, v_scim_users], null) loop
        if pg_relation_size(v_table) > 10 * current_setting('block_size')::bigint
            * greatest((select c.relpages from pg_class c where c.oid = v_table), 1) then
          execute format('analyze %s', v_table);
        end if;
      end loop;
    end $$`.execute(db);
  await sql`
    create function scim_user_of_new_respondent() returns trigger
    language plpgsql
    as $$
    -- Trigger respondents_scim_user: after insert, for each row, deferred to the commit. The respondent's SCIM user,
    -- named by its e-mail address, else (the name is another user's) by its externalId, else by its id; none when
    -- the respondent is gone by the commit or has its user (SCIM wrote it).
    declare
      v_id text := scim_user_id(clock_timestamp(), uuid_send(gen_random_uuid()));
      v_email text;
    begin
      perform scim_statistics_for(tg_relid);
      insert into scim_users (organization_id, environment, id, external_id, user_name, emails)
      select r.organization_id, r.environment, v_id, r.external_id, coalesce(r.email, r.external_id),
        case when r.email is null then '[]'::jsonb
          else jsonb_build_array(jsonb_build_object('value', r.email, 'type', 'work', 'primary', true)) end
      from respondents r
      where r.organization_id = new.organization_id and r.environment = new.environment
        and r.external_id = new.external_id
      on conflict do nothing;
      if found then return null; end if;
      select r.email into v_email from respondents r
      where r.organization_id = new.organization_id and r.environment = new.environment
        and r.external_id = new.external_id;
      if not found or exists (select 1 from scim_users s where s.organization_id = new.organization_id
          and s.environment = new.environment and s.external_id = new.external_id) then
        return null;
      end if;
      if v_email is not null then
        insert into scim_users (organization_id, environment, id, external_id, user_name, emails)
        values (new.organization_id, new.environment, v_id, new.external_id, new.external_id,
          jsonb_build_array(jsonb_build_object('value', v_email, 'type', 'work', 'primary', true)))
        on conflict do nothing;
        if found then return null; end if;
      end if;
      insert into scim_users (organization_id, environment, id, external_id, user_name, emails)
      values (new.organization_id, new.environment, v_id, new.external_id, v_id, scim_emails_with('[]'::jsonb, v_email));
      return null;
    end $$`.execute(db);
  await sql`
    create function scim_user_email_changed() returns trigger
    language plpgsql
    as $$
    -- Trigger respondents_scim_emails: after update of email, for each row whose email changed, deferred to the
    -- commit. The user's addresses as the respondent's e-mail is then (a SCIM write has set both already).
    begin
      update scim_users s set emails = scim_emails_with(s.emails, r.email)
      from respondents r
      where s.organization_id = new.organization_id and s.environment = new.environment
        and s.external_id = new.external_id
        and r.organization_id = new.organization_id and r.environment = new.environment
        and r.external_id = new.external_id
        and s.emails is distinct from scim_emails_with(s.emails, r.email);
      return null;
    end $$`.execute(db);
  await sql`
    create function scim_user_of_gone_respondent() returns trigger
    language plpgsql
    as $$
    -- Trigger respondents_scim_user_gone: after delete, for each row. The respondent's SCIM user goes with it.
    begin
      perform scim_statistics_for(tg_relid);
      delete from scim_users s where s.organization_id = old.organization_id and s.environment = old.environment
        and s.external_id = old.external_id;
      return null;
    end $$`.execute(db);
  // The foreign key's check of each new user cost more than everything else the trigger does (77 µs of about 100 a
  // user, for the lock it takes on the respondent's row): the trigger reads the respondent itself, SCIM writes a
  // user only beside the respondent it has just written, and the deletion it cascaded is a trigger now.
  await sql`alter table scim_users drop constraint scim_users_respondent`.execute(db);
  await sql`create trigger respondents_scim_user_gone after delete on respondents
    for each row execute function scim_user_of_gone_respondent()`.execute(db);
  await sql`create constraint trigger respondents_scim_user after insert on respondents
    deferrable initially deferred for each row execute function scim_user_of_new_respondent()`.execute(db);
  await sql`create constraint trigger respondents_scim_emails after update of email on respondents
    deferrable initially deferred for each row when (old.email is distinct from new.email)
    execute function scim_user_email_changed()`.execute(db);

  // SCIM users made before: their one address, as they were shown it.
  await sql`
    update scim_users s set emails = scim_emails_with('[]'::jsonb, r.email)
    from respondents r
    where r.organization_id = s.organization_id and r.environment = s.environment and r.external_id = s.external_id`.execute(
    db,
  );
  // Respondents without a user: the trigger's names, tried in its order, each pass taking what is still free. The
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
  // Sequential on Citus, so that the migrator's later steps in the same transaction may still change functions; a
  // trigger of a distributed table is dropped, as it was created, only when Citus is told it is safe.
  if (await onCitus(db)) {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
    await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
  }
  await sql`drop trigger respondents_scim_emails on respondents`.execute(db);
  await sql`drop trigger respondents_scim_user on respondents`.execute(db);
  await sql`drop trigger respondents_scim_user_gone on respondents`.execute(db);
  await sql`alter table scim_users add constraint scim_users_respondent foreign key (organization_id, environment, external_id)
    references respondents (organization_id, environment, external_id) on delete cascade`.execute(db);
  await sql`drop function scim_user_of_gone_respondent()`.execute(db);
  await sql`drop function scim_user_email_changed()`.execute(db);
  await sql`drop function scim_user_of_new_respondent()`.execute(db);
  await sql`drop function scim_statistics_for(regclass)`.execute(db);
  await sql`drop function scim_emails_with(jsonb, text)`.execute(db);
  await sql`drop function scim_designated_email(jsonb)`.execute(db);
  await sql`drop function scim_user_id(timestamptz, bytea)`.execute(db);
  // The users the triggers and the backfill added stay: they were respondents' users, as SCIM users are.
  await sql`alter table scim_users drop column emails`.execute(db);
}
