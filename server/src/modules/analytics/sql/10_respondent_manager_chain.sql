-- respondent_manager_chain: the managers above a response's subject as they are now (the subject's manager first,
-- then each one's manager), which the analytics copy freezes in `analytics_responses.manager_chain` for the manager
-- tree breakdown. Called by analytics_copy_response (40_analytics_copy_response.sql) when the subject has a manager.
--
-- One lookup by key per level: each step reads one row of `respondents` by a key that names the tenant, so on Citus
-- the trigger's steps run on the shard's own node. It stops at a manager who is not a respondent, at one without a
-- manager, and at an id already in the chain: a cycle written past the respondents' writer is cut, never followed
-- (modules/respondents/hierarchy.ts reads a manager the same way).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function respondent_manager_chain(tenant_organization text, tenant_environment text, subject text,
                                                    manager text)
  returns text[]
language plpgsql
stable
as $$
-- The chain of managers above the respondent subject, whose manager is manager: manager first, then each one's manager
-- while that one is a respondent of the tenant. Stops at an id already met (the subject included), so a cycle
-- in the data ends the walk instead of looping.
declare
  chain text[] := array[]::text[];
  above text := manager;
begin
  while above is not null and above is distinct from subject and not (above = any(chain)) loop
    chain := array_append(chain, above);
    select p.manager_id into above
    from respondents p
    where p.organization_id = tenant_organization and p.environment = tenant_environment
      and p.external_id = above;
    if not found then
      above := null;
    end if;
  end loop;
  return chain;
end $$;
