/**
 * Every key of a tenant table leads with the tenant. Frozen: later changes go into new files.
 *
 * Three tables still had keys of their own id alone (`surveys`, `responses`, `sync_jobs`), the foreign keys to
 * them followed, and `sync_job_batches` had no tenant columns at all (a job's batches were reached through the
 * job's id). A key that does not lead with the tenant cannot be enforced per shard once tables are distributed
 * by organization, and an index that does not lead with it serves no single-tenant query better than one that
 * does. So:
 * - `surveys`, `responses`, `sync_jobs`: primary key (organization_id, environment, id);
 * - the foreign keys to a survey (from `ai_analyses`, `distributions`, `responses`) and to a sync job (from
 *   `sync_job_batches`) carry the tenant columns, with the same ON DELETE CASCADE;
 * - `sync_job_batches` gains the tenant columns (filled from its job) and its key leads with them;
 * - the indexes of `responses` that led with `survey_id` lead with the tenant, the one-answer-per-respondent
 *   rule included (the writer's ON CONFLICT names the new columns).
 * Ids stay globally unique in practice (128-bit random, see lib/ids.ts); the keys no longer need to say so.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table ai_analyses drop constraint ai_analyses_survey_id_fkey;
    alter table distributions drop constraint distributions_survey_id_fkey;
    alter table responses drop constraint responses_survey_id_fkey;
    alter table surveys drop constraint surveys_pkey;
    alter table surveys add constraint surveys_pk primary key (organization_id, environment, id);
    alter table ai_analyses add constraint ai_analyses_survey foreign key (organization_id, environment, survey_id)
      references surveys (organization_id, environment, id) on delete cascade;
    alter table distributions add constraint distributions_survey foreign key (organization_id, environment, survey_id)
      references surveys (organization_id, environment, id) on delete cascade;
    alter table responses add constraint responses_survey foreign key (organization_id, environment, survey_id)
      references surveys (organization_id, environment, id) on delete cascade;

    alter table responses drop constraint responses_pkey;
    alter table responses add constraint responses_pk primary key (organization_id, environment, id);
    drop index responses_by_respondent;
    create index responses_by_respondent on responses (organization_id, environment, survey_id, respondent_external_id)
      where respondent_external_id is not null;
    drop index responses_by_survey;
    create index responses_by_survey on responses (organization_id, environment, survey_id, submitted_at desc, id desc);
    drop index responses_one_per_respondent;
    create unique index responses_one_per_respondent on responses (organization_id, environment, survey_id, dedupe_key)
      where dedupe_key is not null;

    alter table sync_job_batches add column organization_id text, add column environment text;
    update sync_job_batches b set organization_id = j.organization_id, environment = j.environment
      from sync_jobs j where j.id = b.job_id;
    alter table sync_job_batches alter column organization_id set not null, alter column environment set not null;
    alter table sync_job_batches drop constraint sync_job_batches_job_id_fkey;
    alter table sync_job_batches drop constraint sync_job_batches_pk;
    alter table sync_jobs drop constraint sync_jobs_pkey;
    alter table sync_jobs add constraint sync_jobs_pk primary key (organization_id, environment, id);
    alter table sync_job_batches add constraint sync_job_batches_pk primary key (organization_id, environment, job_id, batch_no);
    alter table sync_job_batches add constraint sync_job_batches_job foreign key (organization_id, environment, job_id)
      references sync_jobs (organization_id, environment, id) on delete cascade;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table sync_job_batches drop constraint sync_job_batches_job;
    alter table sync_job_batches drop constraint sync_job_batches_pk;
    alter table sync_jobs drop constraint sync_jobs_pk;
    alter table sync_jobs add constraint sync_jobs_pkey primary key (id);
    alter table sync_job_batches add constraint sync_job_batches_pk primary key (job_id, batch_no);
    alter table sync_job_batches add constraint sync_job_batches_job_id_fkey foreign key (job_id)
      references sync_jobs (id) on delete cascade;
    alter table sync_job_batches drop column organization_id, drop column environment;

    drop index responses_one_per_respondent;
    create unique index responses_one_per_respondent on responses (survey_id, dedupe_key) where dedupe_key is not null;
    drop index responses_by_survey;
    create index responses_by_survey on responses (survey_id, submitted_at desc, id desc);
    drop index responses_by_respondent;
    create index responses_by_respondent on responses (survey_id, respondent_external_id)
      where respondent_external_id is not null;
    alter table responses drop constraint responses_pk;
    alter table responses add constraint responses_pkey primary key (id);

    alter table responses drop constraint responses_survey;
    alter table distributions drop constraint distributions_survey;
    alter table ai_analyses drop constraint ai_analyses_survey;
    alter table surveys drop constraint surveys_pk;
    alter table surveys add constraint surveys_pkey primary key (id);
    alter table responses add constraint responses_survey_id_fkey foreign key (survey_id) references surveys (id)
      on delete cascade;
    alter table distributions add constraint distributions_survey_id_fkey foreign key (survey_id) references surveys (id)
      on delete cascade;
    alter table ai_analyses add constraint ai_analyses_survey_id_fkey foreign key (survey_id) references surveys (id)
      on delete cascade;
  `.execute(db);
}
