-- The transaction stamp of `responses.xact_id` and `response_deletions.xact_id`, which an export's snapshot is
-- compared with (modules/exports/repository.ts, insertExport; docs/decisions/0039-exports-by-snapshot.md).
--
-- A BEFORE INSERT row trigger rather than a column default: on Citus a default of an INSERT sent by the coordinator
-- is evaluated there, with the coordinator's transaction id, while a trigger runs where the row is stored, so every
-- stamp is the id of the transaction on the tenant's node, as is the snapshot an export takes through the tenant's
-- survey row. On one PostgreSQL it stamps what the default did. It reads nothing and writes only the row it fires
-- for (safe under `citus.enable_unsafe_triggers`).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function stamp_writing_transaction() returns trigger
language plpgsql
as $$
-- Triggers responses_stamp_xact and response_deletions_stamp_xact: before insert, for each row.
begin
  new.xact_id := pg_current_xact_id();
  return new;
end $$;

create or replace trigger responses_stamp_xact before insert on responses
  for each row execute function stamp_writing_transaction();

create or replace trigger response_deletions_stamp_xact before insert on response_deletions
  for each row execute function stamp_writing_transaction();
