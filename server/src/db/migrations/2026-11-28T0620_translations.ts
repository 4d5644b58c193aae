/**
 * Surveys in several languages. `surveys.languages` lists a survey's languages (BCP 47 tags), the first being the
 * language of its own strings; `survey_translations` holds every other language's strings by id, one row per
 * survey and language, co-located with `surveys` on Citus like the surveys' other side tables. Respondents (and
 * the recipient snapshots a distribution takes of them) gain their `language`, a response the `language` it was
 * answered in, and an export the `language` of its labels. Surveys that exist already are in English (`{en}`);
 * every other new column is null for the rows that exist (not known). Frozen: later changes go into new files.
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
  // Columns without constraints (Citus adds a column to a distributed table only without one); a default is not one.
  await sql`alter table surveys add column languages text[] not null default '{en}'`.execute(db);
  await sql`alter table respondents add column language text`.execute(db);
  await sql`alter table distribution_recipients add column language text`.execute(db);
  await sql`alter table responses add column language text`.execute(db);
  await sql`alter table exports add column language text`.execute(db);
  await sql`
    create table survey_translations (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      survey_id text not null,
      language text not null,
      content jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint survey_translations_pk primary key (organization_id, environment, survey_id, language)
    )`.execute(db);
  if (citus) {
    await sql`select create_distributed_table('survey_translations', 'organization_id', colocate_with => 'surveys')`.execute(
      db,
    );
  }
  // The keys come once the table has its place on Citus (a local table cannot point at a distributed one).
  await sql`alter table survey_translations add constraint survey_translations_organization foreign key (organization_id)
    references organizations (id) on delete cascade`.execute(db);
  await sql`alter table survey_translations add constraint survey_translations_survey
    foreign key (organization_id, environment, survey_id)
    references surveys (organization_id, environment, id) on delete cascade`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`drop table survey_translations`.execute(db);
  await sql`alter table exports drop column language`.execute(db);
  await sql`alter table responses drop column language`.execute(db);
  await sql`alter table distribution_recipients drop column language`.execute(db);
  await sql`alter table respondents drop column language`.execute(db);
  await sql`alter table surveys drop column languages`.execute(db);
}
