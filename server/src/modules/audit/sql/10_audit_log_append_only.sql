-- The audit log is append-only in the database, not only in the code (modules/audit; docs/decisions/
-- 0057-audit-log.md): trigger `audit_log_append_only` refuses every UPDATE, and every DELETE but the two the service
-- makes: of entries past their year (the audit module's daily job) and those an organization's deletion cascades to
-- (fired from the foreign key's own trigger, so `pg_trigger_depth()` is 2). Trigger `audit_log_not_truncated`
-- refuses TRUNCATE. The functions run no SQL, so on Citus they are safe on the shards.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function audit_log_append_only() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'DELETE' and (old.occurred_at < now() - interval '1 year' or pg_trigger_depth() > 1) then
    return old;
  end if;
  raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
end $$;

create or replace function audit_log_not_truncated() returns trigger
language plpgsql
as $$
begin
  raise exception 'audit_log is append-only: TRUNCATE refused' using errcode = 'insufficient_privilege';
end $$;

create or replace trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_append_only();

create or replace trigger audit_log_not_truncated before truncate on audit_log
  for each statement execute function audit_log_not_truncated();
