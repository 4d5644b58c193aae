/**
 * The manager chain of a response's subject, as it was when the response was stored: `analytics_responses`
 * gains `manager_chain text[]` (the subject's manager, that manager's manager, and so on), which the analytics
 * breakdown `managerTree` reads in place, as the other segments read the subject's columns. Frozen: later changes
 * go into new files.
 *
 * The chain starts at the subject's `manager_id` (the distribution's snapshot of the respondent, else the record
 * then) and climbs the respondents' current records, one lookup by key per level (`respondent_manager_chain`): a
 * plain statement per step reads one row of one table by a key that names the tenant, so on Citus the trigger's
 * steps run on the shard's own node. It stops at a manager who is not a respondent, at one without a manager, and
 * at an id already in the chain (a cycle that SQL wrote past the writer's refusal is cut, never followed). A
 * response without a subject, or a subject without a manager, gets no chain and costs no lookup.
 *
 * Responses stored before take the chain their subject's manager has on the day of the migration (on one
 * PostgreSQL; on Citus they keep none, see below).
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`alter table analytics_responses add column manager_chain text[]`.execute(db);
  // One statement per query: Citus propagates each DDL statement to the workers with the text it came in.
  await sql`
    create function respondent_manager_chain(tenant_organization text, tenant_environment text, subject text,
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
    end $$`.execute(db);
  await sql`
    create or replace function analytics_copy_response() returns trigger
    language plpgsql
    as $$
    -- Trigger analytics_responses_insert: after insert on responses, for each row.
    declare
      questions jsonb;
      encoded record;
      subject record;
      copy record;
    begin
      select s.questions into questions
      from surveys s
      where s.organization_id = new.organization_id and s.environment = new.environment and s.id = new.survey_id;
      if not found then
        return null;
      end if;
      encoded := analytics_encode(new.answers, questions);
      -- The subject: the distribution's snapshot of the respondent, else their record, else none.
      select null::text as external_id, null::text as email, null::text as first_name, null::text as last_name,
             null::text as department, null::text as location, null::text as job_title, null::text as manager_id,
             null::date as hire_date, null::text as employment_type, null::jsonb as attributes
      into subject;
      if new.respondent_external_id is not null and new.distribution_id is not null then
        select dr.external_id, dr.email, dr.first_name, dr.last_name, dr.department, dr.location, dr.job_title,
               dr.manager_id, dr.hire_date, dr.employment_type, dr.attributes
        into subject
        from distribution_recipients dr
        where dr.organization_id = new.organization_id and dr.environment = new.environment
          and dr.distribution_id = new.distribution_id and dr.external_id = new.respondent_external_id;
      end if;
      if new.respondent_external_id is not null and subject.external_id is null then
        select p.external_id, p.email, p.first_name, p.last_name, p.department, p.location, p.job_title,
               p.manager_id, p.hire_date, p.employment_type, p.attributes
        into subject
        from respondents p
        where p.organization_id = new.organization_id and p.environment = new.environment
          and p.external_id = new.respondent_external_id;
      end if;
      insert into analytics_responses
        (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at,
         nums, cells,
         external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
         employment_type, attributes, manager_chain)
      values (new.organization_id, new.environment, new.survey_id, new.id, new.respondent_external_id,
              new.distribution_id, new.submitted_at, encoded.nums, encoded.cells,
              subject.external_id, subject.email, subject.first_name, subject.last_name, subject.department,
              subject.location, subject.job_title, subject.manager_id, subject.hire_date, subject.employment_type,
              subject.attributes,
              -- The chain as it is now, frozen with the subject; no lookup without a manager.
              case when subject.manager_id is not null then
                respondent_manager_chain(new.organization_id, new.environment, subject.external_id, subject.manager_id)
              end)
      returning submitted_at, cells, external_id, department, location, job_title, hire_date, employment_type
      into copy;
      perform analytics_count_response(new.organization_id, new.environment, new.survey_id, copy, 1);
      return null;
    end $$`.execute(db);
  // Citus refuses a function of the row's columns in a distributed UPDATE; there the responses stored before keep no
  // chain (they count outside every organization in a manager tree).
  if (citus) return;
  await sql`
    update analytics_responses
    set manager_chain = respondent_manager_chain(organization_id, environment, external_id, manager_id)
    where manager_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`
    create or replace function analytics_copy_response() returns trigger
    language plpgsql
    as $$
    -- Trigger analytics_responses_insert: after insert on responses, for each row.
    declare
      questions jsonb;
      encoded record;
      subject record;
      copy record;
    begin
      select s.questions into questions
      from surveys s
      where s.organization_id = new.organization_id and s.environment = new.environment and s.id = new.survey_id;
      if not found then
        return null;
      end if;
      encoded := analytics_encode(new.answers, questions);
      -- The subject: the distribution's snapshot of the respondent, else their record, else none.
      select null::text as external_id, null::text as email, null::text as first_name, null::text as last_name,
             null::text as department, null::text as location, null::text as job_title, null::text as manager_id,
             null::date as hire_date, null::text as employment_type, null::jsonb as attributes
      into subject;
      if new.respondent_external_id is not null and new.distribution_id is not null then
        select dr.external_id, dr.email, dr.first_name, dr.last_name, dr.department, dr.location, dr.job_title,
               dr.manager_id, dr.hire_date, dr.employment_type, dr.attributes
        into subject
        from distribution_recipients dr
        where dr.organization_id = new.organization_id and dr.environment = new.environment
          and dr.distribution_id = new.distribution_id and dr.external_id = new.respondent_external_id;
      end if;
      if new.respondent_external_id is not null and subject.external_id is null then
        select p.external_id, p.email, p.first_name, p.last_name, p.department, p.location, p.job_title,
               p.manager_id, p.hire_date, p.employment_type, p.attributes
        into subject
        from respondents p
        where p.organization_id = new.organization_id and p.environment = new.environment
          and p.external_id = new.respondent_external_id;
      end if;
      insert into analytics_responses
        (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at,
         nums, cells,
         external_id, email, first_name, last_name, department, location, job_title, manager_id, hire_date,
         employment_type, attributes)
      values (new.organization_id, new.environment, new.survey_id, new.id, new.respondent_external_id,
              new.distribution_id, new.submitted_at, encoded.nums, encoded.cells,
              subject.external_id, subject.email, subject.first_name, subject.last_name, subject.department,
              subject.location, subject.job_title, subject.manager_id, subject.hire_date, subject.employment_type,
              subject.attributes)
      returning submitted_at, cells, external_id, department, location, job_title, hire_date, employment_type
      into copy;
      perform analytics_count_response(new.organization_id, new.environment, new.survey_id, copy, 1);
      return null;
    end $$`.execute(db);
  await sql`drop function respondent_manager_chain(text, text, text, text)`.execute(db);
  await sql`alter table analytics_responses drop column manager_chain`.execute(db);
}
