-- THE writer of responses (modules/surveys/responses-repository.ts, storeResponse, says what it promises; docs/
-- decisions/0023-one-response-writer.md): every channel (the API's POST .../responses, the answer page, kiosk codes)
-- stores a response through one call of this function. While the survey is active (its row share-locked), the
-- response, the recipient it answers marked `responded`, the count's +1 delta, and its `response.submitted` event
-- (record_event, modules/events/sql/20_record_event.sql; p_event_data completed with the distribution and the
-- survey's version). The insert into `responses` fires its triggers, in the same transaction and on the same node:
-- the transaction stamp (modules/exports/sql/10_stamp_writing_transaction.sql) and the analytics copy and counts
-- (modules/analytics/sql/40_analytics_copy_response.sql).
--
-- p_channel: `api` (the distribution is the latest that reached the named respondent before p_submitted_at),
-- `personal` (the link's recipient, by p_token_hash, locked; a link already answered stores nothing) or `embed`
-- (p_distribution_id). p_identified false (an anonymous survey's link) leaves no response id and no time on the
-- recipient row, which would tie the answer back to its recipient.
--
-- Returns one row: active (the survey was active), stored, used (the personal link had been answered), the
-- response's distribution and survey version, and the webhook deliveries queued.
--
-- One function call rather than one statement of data-modifying CTEs: Citus cannot route such a statement whole,
-- while a call made outside a transaction block is delegated whole to the node holding the organization's shards,
-- where each statement below names one tenant and runs on the local shards. On plain PostgreSQL it is one round
-- trip, with PL/pgSQL's cached plans.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function store_response(
  p_organization_id text, p_environment text, p_survey_id text, p_response_id text,
  p_respondent_external_id text, p_dedupe_key text, p_answers jsonb, p_submitted_at timestamptz, p_language text,
  p_event_id text, p_event_data jsonb, p_channel text, p_distribution_id text, p_token_hash bytea,
  p_identified boolean
)
returns table (active integer, stored integer, used integer, distribution_id text, survey_version integer,
               queued integer)
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

-- On Citus: distributed by p_organization_id and co-located with `surveys`, so that a call made outside a
-- transaction block is delegated whole to the node holding the organization's shards, and the function exists on
-- every node (docs/decisions/0059-citus-single-shard-requests.md). Nothing on plain PostgreSQL.
do $$
begin
  if exists (select 1 from pg_extension where extname = 'citus') then
    perform create_distributed_function(
      'store_response(text, text, text, text, text, text, jsonb, timestamptz, text, text, jsonb, text, text, bytea, boolean)',
      'p_organization_id', colocate_with := 'surveys');
  end if;
end $$;
