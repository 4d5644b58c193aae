-- A submission as one function call, and the event writer as a function it shares with every other change. Run
-- by 2026-11-29T0100_submission_in_one_call.ts, which on Citus distributes both functions by their
-- `p_organization_id`, co-located with `surveys`.
--
-- Until now a submission was one statement of data-modifying CTEs. On plain PostgreSQL that is one round trip, but
-- Citus cannot route such a statement whole: it splits it into subplans, sends their intermediate results to every
-- worker and commits over all of them (two-phase), so a submission was 17 distributed executions and, while any
-- one worker was away, every tenant's submissions failed. Called as `select * from store_response(...)` outside a
-- transaction block, Citus delegates the call whole to the node holding the organization's shards; there each
-- statement below names one tenant and runs on the local shards, and the transaction commits on that node alone.
-- On plain PostgreSQL it is the same one round trip as before, with PL/pgSQL's cached plans.
--
-- Frozen like every migration: a later change goes into a new migration (docs/schema.sql shows the current text).


-- THE event writer: stores one event of a tenant and queues a first delivery to each enabled webhook of that
-- tenant subscribed to its type (`webhook.test` goes only to the webhook being tested, never to subscribers).
-- Returns when the event was recorded and how many deliveries it queued (the caller wakes the dispatchers).
-- Each webhook's row is key-share locked, so none is deleted under the insert of its delivery.
create function record_event(p_organization_id text, p_environment text, p_id text, p_type text, p_data jsonb)
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


-- THE writer of responses (server/src/modules/surveys/responses-repository.ts says what it promises): while the
-- survey is active (its row share-locked), the response, the recipient it answers marked `responded`, the count's
-- +1 delta, and its `response.submitted` event (p_event_data completed with the distribution and the survey's
-- version). The row triggers of `responses` make the analytics copy on the same node.
--
-- p_channel: `api` (the distribution is the latest that reached the named respondent before p_submitted_at),
-- `personal` (the link's recipient, by p_token_hash, locked; a link already answered stores nothing) or `embed`
-- (p_distribution_id). p_identified false (an anonymous survey's link) leaves no response id and no time on the
-- recipient row, which would tie the answer back to its recipient.
--
-- Returns one row: active (the survey was active), stored, used (the personal link had been answered), the
-- response's distribution and survey version, and the webhook deliveries queued.
create function store_response(
  p_organization_id text, p_environment text, p_survey_id text, p_response_id text,
  p_respondent_external_id text, p_dedupe_key text, p_answers jsonb, p_submitted_at timestamptz, p_language text,
  p_event_id text, p_event_data jsonb, p_channel text, p_distribution_id text, p_token_hash bytea,
  p_identified boolean
)
returns table (active integer, stored integer, used integer, distribution_id text, survey_version integer, queued integer)
language plpgsql
as $$
declare
  accepted_version integer;
  answered_by text := p_respondent_external_id;
  recipient_status text;
  answered_distribution text := p_distribution_id;
  new_response_id text;
  event_queued integer;
begin
  select s.version into accepted_version
  from surveys s
  where s.organization_id = p_organization_id and s.environment = p_environment and s.id = p_survey_id
    and s.status = 'active'
  for share;
  if not found then
    return query select 0, 0, 0, null::text, null::integer, 0;
    return;
  end if;

  if p_channel = 'personal' then
    select dr.external_id, dr.status into answered_by, recipient_status
    from distribution_recipients dr
    where dr.organization_id = p_organization_id and dr.environment = p_environment
      and dr.distribution_id = p_distribution_id and dr.token_hash = p_token_hash
    for update;
    -- An unknown link stores nothing, like an answered one (which is `used`).
    if recipient_status is null or recipient_status = 'responded' then
      return query select 1, 0, coalesce(recipient_status = 'responded', false)::integer, null::text, null::integer, 0;
      return;
    end if;
  elsif p_channel = 'api' then
    select dr.distribution_id into answered_distribution
    from distribution_recipients dr
    where dr.organization_id = p_organization_id and dr.environment = p_environment and dr.survey_id = p_survey_id
      and dr.external_id = p_respondent_external_id and dr.status in ('sent', 'responded')
      and dr.sent_at <= p_submitted_at
    order by dr.sent_at desc
    limit 1;
  end if;

  insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers,
                         submitted_at, distribution_id, survey_version, language)
  values (p_response_id, p_survey_id, p_organization_id, p_environment, p_respondent_external_id, p_dedupe_key,
          p_answers, p_submitted_at, answered_distribution, accepted_version, p_language)
  on conflict (organization_id, environment, survey_id, dedupe_key) where dedupe_key is not null do nothing
  returning responses.id into new_response_id;
  if new_response_id is null then
    -- This respondent has answered already, where one response each is allowed.
    return query select 1, 0, 0, null::text, null::integer, 0;
    return;
  end if;

  update distribution_recipients dr
  set status = 'responded',
      responded_at = case when p_identified then p_submitted_at end,
      response_id = case when p_identified then new_response_id end
  where dr.organization_id = p_organization_id and dr.environment = p_environment
    and dr.distribution_id = answered_distribution and dr.external_id = answered_by and dr.status <> 'responded';

  insert into survey_response_counts (organization_id, environment, survey_id, n)
  values (p_organization_id, p_environment, p_survey_id, 1);

  select e.queued into event_queued
  from record_event(p_organization_id, p_environment, p_event_id, 'response.submitted',
                    p_event_data || jsonb_build_object('distributionId', answered_distribution, 'surveyVersion', accepted_version)) e;

  return query select 1, 1, 0, answered_distribution, accepted_version, event_queued;
end $$;
