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
    // responses.distribution_id (read through to_jsonb(row), so the trigger does not break should that column
    // ever be renamed or dropped).
    .addColumn('distribution_id', 'text')
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('nums', sql`smallint[]`, (c) => c.notNull())
    .addColumn('cells', sql`integer[]`, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_responses_pk', ['organization_id', 'environment', 'survey_id', 'response_id'])
    .execute();
  // Exact daily pre-aggregation: per survey, UTC day and cell code, how many responses carry it (code −1: the
  // responses themselves). Kept by the same triggers, in the same statement, so it is never stale; whole-survey
  // analytics over whole days read a few hundred rows instead of scanning every response. Append-only deltas
  // (a deletion appends negative counts), summed on read: no two transactions ever wait on one counter row. The
  // analytics.compact job folds each key's deltas into one row; sums are unchanged by it.
  await db.schema
    .createTable('analytics_daily_cells')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('code', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create index analytics_daily_cells_by_key on analytics_daily_cells (organization_id, environment, survey_id, day, code)`.execute(db);
  await sql`create index analytics_responses_by_time on analytics_responses (organization_id, environment, survey_id, submitted_at)`.execute(db);
  // Participation: has this recipient responded?
  await sql`create index analytics_responses_by_respondent on analytics_responses (organization_id, environment, survey_id, respondent_external_id) where respondent_external_id is not null`.execute(db);

  // PL/pgSQL, one pass over the questions: it runs for every submitted response, so it must be cheap. It must
  // also never fail, or it would refuse a response: values the API would not have accepted (rows written by other
  // means) are skipped, never cast blindly.
  await sql`
    create function analytics_encode(answers jsonb, questions jsonb, out nums smallint[], out cells integer[])
    language plpgsql immutable parallel safe as $$
    declare
      by_id jsonb := '{}';
      question jsonb;
      choice jsonb;
      answer jsonb;
      kind text;
      pos integer := 0;
      choice_pos integer;
      number_value integer;
    begin
      nums := '{}';
      cells := '{}';
      if jsonb_typeof(questions) is distinct from 'array' then
        return;
      end if;
      if jsonb_typeof(answers) = 'array' then
        select coalesce(jsonb_object_agg(item->>'questionId', item->'value'), '{}') into by_id
        from jsonb_array_elements(answers) as item
        where jsonb_typeof(item) = 'object' and jsonb_typeof(item->'questionId') = 'string';
      end if;
      for question in select value from jsonb_array_elements(questions) loop
        answer := by_id -> (question->>'id');
        kind := question->>'type';
        number_value := case when jsonb_typeof(answer) = 'number' and (answer #>> '{}') ~ '^[0-9]{1,4}$' then (answer #>> '{}')::integer end;
        nums := array_append(nums, case when kind in ('nps', 'rating') then number_value::smallint end);
        if kind in ('nps', 'rating') and number_value is not null then
          cells := array_append(cells, pos * 100000 + number_value);
        elsif kind = 'text' and jsonb_typeof(answer) = 'string' then
          cells := array_append(cells, pos * 100000 + least(length(answer #>> '{}'), 99998));
        elsif jsonb_typeof(question->'choices') = 'array'
              and ((kind = 'single_choice' and jsonb_typeof(answer) = 'string') or (kind = 'multiple_choice' and jsonb_typeof(answer) = 'array')) then
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
        pos := pos + 1;
      end loop;
    end $$`.execute(db);

  // Statement-level triggers with transition tables: one set-based write per statement, so a bulk insert
  // (an import, the benchmark's INSERT … SELECT) pays no per-row trigger overhead.
  await sql`
    create function analytics_responses_added() returns trigger language plpgsql as $$
    begin
      with copied as (
        insert into analytics_responses
          (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells)
        select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id, to_jsonb(r)->>'distribution_id',
               r.submitted_at, e.nums, e.cells
        from added r join surveys s on s.id = r.survey_id, analytics_encode(r.answers, s.questions) e
        returning organization_id, environment, survey_id, submitted_at, cells
      )
      insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
      select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, count(*)
      from copied, unnest(array_append(cells, -1)) as code
      group by 1, 2, 3, 4, 5;
      return null;
    end $$`.execute(db);
  await sql`
    create function analytics_responses_removed() returns trigger language plpgsql as $$
    begin
      with dropped as (
        delete from analytics_responses a using removed r
        where a.organization_id = r.organization_id and a.environment = r.environment
          and a.survey_id = r.survey_id and a.response_id = r.id
        returning a.organization_id, a.environment, a.survey_id, a.submitted_at, a.cells
      )
      insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
      select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, -count(*)
      from dropped, unnest(array_append(cells, -1)) as code
      group by 1, 2, 3, 4, 5;
      return null;
    end $$`.execute(db);
  await sql`create trigger analytics_responses_insert after insert on responses referencing new table as added for each statement execute function analytics_responses_added()`.execute(db);
  await sql`create trigger analytics_responses_delete after delete on responses referencing old table as removed for each statement execute function analytics_responses_removed()`.execute(db);
  // Responses are not edited through the API; should a row change anyway (a distribution linked later), the
  // copy follows in the same transaction: the old rows go, the new ones are encoded again (same-event triggers
  // fire in name order, hence a_ before b_).
  await sql`create trigger analytics_responses_update_a_remove after update on responses referencing old table as removed for each statement execute function analytics_responses_removed()`.execute(db);
  await sql`create trigger analytics_responses_update_b_add after update on responses referencing new table as added for each statement execute function analytics_responses_added()`.execute(db);

  // Responses stored before this migration.
  await sql`
    insert into analytics_responses
      (organization_id, environment, survey_id, response_id, respondent_external_id, distribution_id, submitted_at, nums, cells)
    select r.organization_id, r.environment, r.survey_id, r.id, r.respondent_external_id, to_jsonb(r)->>'distribution_id',
           r.submitted_at, e.nums, e.cells
    from responses r join surveys s on s.id = r.survey_id, analytics_encode(r.answers, s.questions) e`.execute(db);
  await sql`
    insert into analytics_daily_cells (organization_id, environment, survey_id, day, code, n)
    select organization_id, environment, survey_id, (submitted_at at time zone 'UTC')::date, code, count(*)
    from analytics_responses, unnest(array_append(cells, -1)) as code
    group by 1, 2, 3, 4, 5`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ['analytics_responses_insert', 'analytics_responses_delete', 'analytics_responses_update_a_remove', 'analytics_responses_update_b_add']) {
    await sql`drop trigger if exists ${sql.ref(trigger)} on responses`.execute(db);
  }
  await sql`drop function if exists analytics_responses_added()`.execute(db);
  await sql`drop function if exists analytics_responses_removed()`.execute(db);
  await sql`drop function if exists analytics_encode(jsonb, jsonb)`.execute(db);
  await db.schema.dropTable('analytics_daily_cells').ifExists().execute();
  await db.schema.dropTable('analytics_responses').ifExists().execute();
  await db.schema.dropTable('analytics_settings').ifExists().execute();
}
