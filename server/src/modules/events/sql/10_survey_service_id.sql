-- survey_service_id(prefix): an identifier as server/src/lib/ids.ts makes them (48 bits of milliseconds and 80 random
-- bits in Crockford base32, after `prefix_`), made in SQL so that one call can queue an event's webhook deliveries
-- for however many subscribers it finds. Called by record_event (20_record_event.sql).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function survey_service_id(prefix text) returns text
language plpgsql volatile
as $$
declare
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  ms bigint := floor(extract(epoch from clock_timestamp()) * 1000);
  encoded text := '';
begin
  for i in 1..10 loop
    encoded := substr(alphabet, (ms % 32)::int + 1, 1) || encoded;
    ms := ms / 32;
  end loop;
  for i in 1..16 loop
    encoded := encoded || substr(alphabet, floor(random() * 32)::int + 1, 1);
  end loop;
  return prefix || '_' || encoded;
end $$;
