/**
 * The analytics encoding (`analytics_encode`) learns the question types matrix, ranking, number and date, and the
 * options N/A and "Other". Frozen: later changes go into new files.
 *
 * Codes of a question at position `pos` stay `pos * 100000 + x`:
 * - matrix: `row * 1000 + v` per answered row (v: the scale's value, or the column's position), and 99999 for
 *   "answered";
 * - ranking: `choice * 100 + rank` per choice (rank from 1), and 99999;
 * - date: days since 1900-01-01 (the API keeps date answers within 1900-01-01 … 2170-12-31, so under 99999), which
 *   makes the histogram of days exact for min, max, median and any binning;
 * - number: 99999 only ("answered"); their figures come from the answers themselves (`numberFigures`).
 * N/A and "Other" are counted apart from the scale, at position `10000 + pos` (`MARKS_POSITION` in the analytics
 * module), so that no reader of a question's own histogram (means, NPS, favourable shares, trends) ever sees
 * them: key 0 for an N/A answer of nps and rating, 1 for an "Other" choice, `1000 + row` for a matrix row's N/A.
 * The largest code, (10000 + 100) * 100000 + 1029, stays inside a PostgreSQL integer.
 *
 * `nums` (one smallint per question, drivers' input) is unchanged: the new types give null there, and N/A too.
 *
 * Responses already stored keep their cells; none of them can hold the new types, whose questions did not exist.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // PL/pgSQL, one pass over the questions: it runs for every submitted response, so it must be cheap. It must
  // also never fail, or it would refuse a response: values the API would not have accepted are skipped.
  await sql`
    create or replace function analytics_encode(answers jsonb, questions jsonb, out nums smallint[], out cells integer[])
    language plpgsql immutable parallel safe as $$
    declare
      by_id jsonb := '{}';
      question jsonb;
      choice jsonb;
      answer jsonb;
      cell jsonb;
      kind text;
      pos integer := 0;
      choice_pos integer;
      row_pos integer;
      number_value integer;
      days integer;
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
        elsif kind in ('nps', 'rating') and jsonb_typeof(answer) = 'null' then
          cells := array_append(cells, (10000 + pos) * 100000);
        elsif kind = 'text' and jsonb_typeof(answer) = 'string' then
          cells := array_append(cells, pos * 100000 + least(length(answer #>> '{}'), 99998));
        elsif kind in ('single_choice', 'multiple_choice') and jsonb_typeof(question->'choices') = 'array'
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
          -- "Other" is rare: its text is looked up only when the answer selects it (nested, as a SQL and goes on
          -- evaluating after a null).
          if question ? 'allowOther' then
            if (question->>'allowOther') = 'true'
               and (answer #>> '{}' = 'other' or (jsonb_typeof(answer) = 'array' and answer ? 'other')) then
              if exists (select 1 from jsonb_array_elements(answers) as a
                         where a->>'questionId' = question->>'id' and jsonb_typeof(a->'other') = 'string') then
                cells := array_append(cells, (10000 + pos) * 100000 + 1);
              end if;
            end if;
          end if;
        elsif kind = 'matrix' and jsonb_typeof(answer) = 'object' and jsonb_typeof(question->'rows') = 'array' then
          cells := array_append(cells, pos * 100000 + 99999);
          row_pos := 0;
          for choice in select value from jsonb_array_elements(question->'rows') loop
            cell := answer -> (choice->>'id');
            if jsonb_typeof(cell) = 'null' then
              cells := array_append(cells, (10000 + pos) * 100000 + 1000 + row_pos);
            elsif jsonb_typeof(cell) = 'number' and (cell #>> '{}') ~ '^[0-9]{1,2}$' then
              cells := array_append(cells, pos * 100000 + row_pos * 1000 + (cell #>> '{}')::integer);
            elsif jsonb_typeof(cell) = 'string' and jsonb_typeof(question->'columns') = 'array' then
              select c.n - 1 into choice_pos
              from jsonb_array_elements(question->'columns') with ordinality as c(col, n)
              where c.col->>'id' = cell #>> '{}';
              if choice_pos is not null then
                cells := array_append(cells, pos * 100000 + row_pos * 1000 + choice_pos);
              end if;
            end if;
            row_pos := row_pos + 1;
          end loop;
        elsif kind = 'ranking' and jsonb_typeof(answer) = 'array' and jsonb_typeof(question->'choices') = 'array' then
          cells := array_append(cells, pos * 100000 + 99999);
          choice_pos := 0;
          for choice in select value from jsonb_array_elements(question->'choices') loop
            select r.n into row_pos
            from jsonb_array_elements_text(answer) with ordinality as r(id, n)
            where r.id = choice->>'id';
            if row_pos is not null and row_pos < 100 then
              cells := array_append(cells, pos * 100000 + choice_pos * 100 + row_pos);
            end if;
            choice_pos := choice_pos + 1;
          end loop;
        elsif kind = 'number' and jsonb_typeof(answer) = 'number' then
          cells := array_append(cells, pos * 100000 + 99999);
        elsif kind = 'date' and jsonb_typeof(answer) = 'string' and (answer #>> '{}') ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then
          begin
            days := (answer #>> '{}')::date - date '1900-01-01';
          exception when others then
            days := null;
          end;
          if days between 0 and 99998 then
            cells := array_append(cells, pos * 100000 + days);
          end if;
        end if;
        pos := pos + 1;
      end loop;
    end $$`.execute(db);
}

/** The encoding of the five first types, as 2026-11-24T0600 wrote it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function analytics_encode(answers jsonb, questions jsonb, out nums smallint[], out cells integer[])
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
}
