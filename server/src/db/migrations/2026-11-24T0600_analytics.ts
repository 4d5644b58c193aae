/**
 * Analytics: the anonymity threshold per organization and environment, and an exact, typed copy of every
 * response's answers that aggregate queries can scan ten times faster than the jsonb. Frozen: later changes go
 * into new migration files.
 *
 * `analytics_responses` is maintained by triggers on `responses` in the same transaction as the response row
 * (insert, delete, and update should a row ever change), so it is never stale: every figure read from it equals the
 * figure computed from `responses.answers`. Two encodings per response, both by question position (questions
 * freeze at the first launch, and responses exist only after it):
 *
 * - `nums[p]`: the answer of the `nps` or `rating` question at position p (1-based), else null — paired values
 *   for correlations (`corr(nums[i], nums[j])`);
 * - `cells`: one integer per answered value, `(p − 1) × 100000 + v`, where v is the numeric answer, the 0-based
 *   index of the chosen choice (one per selection for `multiple_choice`, plus 99999 marking that the question was
 *   answered) or the text's length in characters. `unnest(cells)` grouped by value is the complete histogram of
 *   every question in one pass.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('analytics_settings')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('anonymity_threshold', 'integer', (c) => c.notNull().check(sql`anonymity_threshold between 3 and 100`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('analytics_settings_pk', ['organization_id', 'environment'])
    .execute();

  await db.schema
    .createTable('analytics_responses')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull())
    .addColumn('response_id', 'text', (c) => c.notNull())
    .addColumn('respondent_external_id', 'text')
    // responses.distribution_id (read through to_jsonb(new), so the trigger does not break should that column
    // ever be renamed or dropped).
    .addColumn('distribution_id', 'text')
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('nums', sql`smallint[]`, (c) => c.notNull())
    .addColumn('cells', sql`integer[]`, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_responses_pk', ['organization_id', 'environment', 'survey_id', 'response_id'])
    .execute();
  await sql`create index analytics_responses_by_time on analytics_responses (organization_id, environment, survey_id, submitted_at)`.execute(db);
  // Participation: has this recipient responded?
  await sql`create index analytics_responses_by_respondent on analytics_responses (organization_id, environment, survey_id, respondent_external_id) where respondent_external_id is not null`.execute(db);

  // PL/pgSQL, one pass over the questions: it runs for every submitted response, so it must be cheap.
  await sql`
    create function analytics_encode(answers jsonb, questions jsonb, out nums smallint[], out cells integer[])
    language plpgsql immutable parallel safe as $$
    declare
      by_id jsonb;
      question jsonb;
      choice jsonb;
      answer jsonb;
      kind text;
      pos integer := 0;
      choice_pos integer;
    begin
      nums := '{}';
      cells := '{}';
      select coalesce(jsonb_object_agg(item->>'questionId', item->'value'), '{}') into by_id from jsonb_array_elements(answers) as item;
      for question in select value from jsonb_array_elements(questions) loop
        answer := by_id -> (question->>'id');
        kind := question->>'type';
        if kind in ('nps', 'rating') and answer is not null then
          nums := array_append(nums, (answer #>> '{}')::smallint);
          cells := array_append(cells, pos * 100000 + (answer #>> '{}')::integer);
        else
          nums := array_append(nums, null::smallint);
          if answer is not null and kind = 'text' then
            cells := array_append(cells, pos * 100000 + length(answer #>> '{}'));
          elsif answer is not null and kind in ('single_choice', 'multiple_choice') then
            if kind = 'multiple_choice' then
              cells := array_append(cells, pos * 100000 + 99999);
            end if;
            choice_pos := 0;
            for choice in select value from jsonb_array_elements(question->'choices') loop
              if (kind = 'single_choice' and choice->>'id' = answer #>> '{}') or (kind = 'multiple_choice' and answer ? (choice->>'id')) then
                cells := array_append(cells, pos * 100000 + choice_pos);
              end if;
              choice_pos := choice_pos + 1;
            end loop;
          end if;
        end if;
        pos := pos + 1;
      end loop;
    end $$`.execute(db);

  await sql`
    create function analytics_responses_sync() returns trigger language plpgsql as $$
    declare
      encoded record;
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        delete from analytics_responses
        where organization_id = old.organization_id and environment = old.environment
          and survey_id = old.survey_id and response_id = old.id;
        if tg_op = 'DELETE' then
          return old;
        end if;
      end if;
      select e.nums, e.cells into encoded
      from surveys s, analytics_encode(new.answers, s.questions) e
      where s.id = new.survey_id;
      insert into analytics_responses
        (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells)
      values (new.organization_id, new.environment, new.survey_id, new.id, new.respondent_external_id,
              to_jsonb(new)->>'distribution_id', new.submitted_at, encoded.nums, encoded.cells);
      return new;
    end $$`.execute(db);
  await sql`create trigger analytics_responses_insert after insert on responses for each row execute function analytics_responses_sync()`.execute(db);
  await sql`create trigger analytics_responses_delete after delete on responses for each row execute function analytics_responses_sync()`.execute(db);
  // Responses are not edited through the API; should a column change anyway (a distribution linked later), the
  // copy follows in the same transaction.
  await sql`create trigger analytics_responses_update after update on responses for each row execute function analytics_responses_sync()`.execute(db);

  // Responses stored before this migration.
  await sql`
    insert into analytics_responses
      (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells)
    select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id, to_jsonb(r)->>'distribution_id',
           r.submitted_at, e.nums, e.cells
    from responses r join surveys s on s.id = r.survey_id, analytics_encode(r.answers, s.questions) e`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists analytics_responses_insert on responses`.execute(db);
  await sql`drop trigger if exists analytics_responses_delete on responses`.execute(db);
  await sql`drop trigger if exists analytics_responses_update on responses`.execute(db);
  await sql`drop function if exists analytics_responses_sync()`.execute(db);
  await sql`drop function if exists analytics_encode(jsonb, jsonb)`.execute(db);
  await db.schema.dropTable('analytics_responses').ifExists().execute();
  await db.schema.dropTable('analytics_settings').ifExists().execute();
}
