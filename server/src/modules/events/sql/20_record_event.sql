-- THE event writer (modules/events/record.ts says what it promises): stores one event of a tenant and queues a first
-- delivery to each enabled webhook of that tenant subscribed to its type (`webhook.test` goes only to the webhook
-- being tested, never to subscribers). Returns when the event was recorded and how many deliveries it queued (the
-- caller wakes the dispatchers). Each webhook's row is key-share locked, so none is deleted under the insert of its
-- delivery. Called by modules/events/record.ts for every change's event and by store_response
-- (modules/surveys/sql/30_store_response.sql) for `response.submitted`.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function record_event(p_organization_id text, p_environment text, p_id text, p_type text,
                                        p_data jsonb)
returns table (created_at timestamptz, queued integer)
language plpgsql
as $$
declare
  recorded_at timestamptz;
  webhook record;
  deliveries integer := 0;
begin
  insert into events (organization_id, environment, id, type, data)
  values (p_organization_id, p_environment, p_id, p_type, p_data)
  returning events.created_at into recorded_at;
  if p_type <> 'webhook.test' then
    -- One row at a time by key: a webhook tenant has a handful, and each insert stays on the tenant's shard.
    for webhook in
      select w.id
      from webhooks w
      where w.organization_id = p_organization_id and w.environment = p_environment and w.enabled
        and (w.events @> array[p_type]::text[] or w.events @> array['*']::text[])
      for key share of w
    loop
      insert into webhook_deliveries (organization_id, environment, id, webhook_id, event_id, event_type, attempt, manual)
      values (p_organization_id, p_environment, survey_service_id('whd'), webhook.id, p_id, p_type, 1, false);
      deliveries := deliveries + 1;
    end loop;
  end if;
  return query select recorded_at, deliveries;
end $$;

-- On Citus: distributed by p_organization_id and co-located with `surveys`, so that a call made outside a
-- transaction block is delegated whole to the node holding the organization's shards, and the function exists on
-- every node (docs/decisions/0059-citus-single-shard-requests.md). Nothing on plain PostgreSQL.
do $$
begin
  if exists (select 1 from pg_extension where extname = 'citus') then
    perform create_distributed_function(
      'record_event(text, text, text, text, jsonb)',
      'p_organization_id', colocate_with := 'surveys');
  end if;
end $$;
