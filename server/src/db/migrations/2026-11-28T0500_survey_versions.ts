/**
 * Versions of launched surveys. A launched survey's questions may still be reworded and grow (new choices and new
 * optional questions after the existing ones); each change is a new version, kept whole in `survey_versions`, so
 * `GET /surveys/{id}?version=n` shows what a response of version n answered. `surveys.version` is the current one
 * (null until the first launch), and `responses.survey_version` the one each response answered: a column the one
 * response writer fills from the survey row it already reads, so it costs a submission nothing. Responses stored
 * before this migration answered the only version there was: they read as 1 (`coalesce`), without rewriting the
 * table. Frozen: later changes go into new files.
 *
 * Events already stored with a survey (`survey.launched`, `.paused`, `.closed`) gain the `version` the contract
 * now requires of a survey: 1 when it had been launched, null otherwise.
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
  // The column, then its check: Citus adds a column to a distributed table only without a constraint.
  await sql`alter table surveys add column version integer`.execute(db);
  await sql`alter table surveys add constraint surveys_version_check check (version >= 1)`.execute(db);
  await sql`update surveys set version = 1 where first_launched_at is not null`.execute(db);
  await sql`alter table responses add column survey_version integer`.execute(db);
  await sql`
    create table survey_versions (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      survey_id text not null,
      version integer not null check (version >= 1),
      title text not null,
      description text,
      questions jsonb not null,
      created_at timestamptz not null default now(),
      constraint survey_versions_pk primary key (organization_id, environment, survey_id, version)
    )`.execute(db);
  if (citus) {
    await sql`select create_distributed_table('survey_versions', 'organization_id', colocate_with => 'surveys')`.execute(
      db,
    );
  }
  // The keys come once the table has its place on Citus (a local table cannot point at a distributed one).
  await sql`alter table survey_versions add constraint survey_versions_organization foreign key (organization_id)
    references organizations (id) on delete cascade`.execute(db);
  await sql`alter table survey_versions add constraint survey_versions_survey foreign key (organization_id, environment, survey_id)
    references surveys (organization_id, environment, id) on delete cascade`.execute(db);
  await sql`
    insert into survey_versions (organization_id, environment, survey_id, version, title, description, questions, created_at)
    select organization_id, environment, id, 1, title, description, questions, first_launched_at
    from surveys where first_launched_at is not null`.execute(db);
  await sql`
    update events
    set data = data || jsonb_build_object('version', case when data->>'launchedAt' is not null then 1 end)
    where type in ('survey.launched', 'survey.paused', 'survey.closed') and not data ? 'version'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`update events set data = data - 'version' where type in ('survey.launched', 'survey.paused', 'survey.closed')`.execute(
    db,
  );
  await sql`drop table survey_versions`.execute(db);
  await sql`alter table responses drop column survey_version`.execute(db);
  await sql`alter table surveys drop column version`.execute(db);
}
