-- scim_user_id: a SCIM user id as server/src/lib/ids.ts makes them (`usr_`, 10 characters of milliseconds and 16 of
-- p_seed's first 16 bytes, in Crockford base32, so that ids sort by creation time), from a time and a seed rather
-- than the clock and chance, so that the same row always gets the same id. No code of the service calls it today:
-- the migration 2026-11-29T0600_scim_one_population made the users of the respondents stored before it with it
-- (on Citus no volatile function can be pushed down into such an update).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function scim_user_id(p_at timestamptz, p_seed bytea) returns text
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
end $$;
