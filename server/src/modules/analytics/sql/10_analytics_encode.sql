-- analytics_encode: a response's answers as the analytics copy stores them (`analytics_responses.nums` and
-- `.cells`). Called for every stored response by the triggers of `responses` (40_analytics_copy_response.sql,
-- 40_analytics_recode_response.sql); modules/surveys/questions.ts keeps launched questions in place because of it.
--
-- `nums`: one smallint per question, in question order: the answer of an nps or rating question, else null (the
-- drivers' correlations, `corr(nums[i], nums[j])`).
-- `cells`: one integer per answered value, `pos * 100000 + x` for the question at position pos (from 0):
-- - nps, rating: the value; text: its length in characters (at most 99998);
-- - single and multiple choice: the chosen choice's position, and 99999 ("answered") for multiple choice;
-- - matrix: `row * 1000 + v` per answered row (v: the scale's value, or the column's position), and 99999;
-- - ranking: `choice * 100 + rank` per ranked choice (rank from 1), and 99999;
-- - date: days since 1900-01-01 (the API keeps dates within 1900-01-01 ... 2170-12-31); number: 99999 only (its
--   figures come from the answers themselves).
-- N/A and "Other" are counted apart from the scale, at position `10000 + pos` (MARKS_POSITION in the analytics
-- module): 0 for an N/A of nps and rating, 1 for an "Other" choice, `1000 + row` for a matrix row's N/A.
-- `unnest(cells)` grouped by value is every question's histogram in one pass (docs/decisions/
-- 0024-analytics-exact-counts.md, 0018-question-types.md).
--
-- It runs for every submitted response, so it must be cheap: the arrays are walked by index, in plain expressions
-- (a FOR over a query starts an executor each time). It must never fail, or it would refuse a response: values the
-- API would not have accepted (rows written by other means) are skipped, never cast blindly.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function analytics_encode(answers jsonb, questions jsonb, out nums smallint[], out cells integer[])
language plpgsql immutable parallel safe
as $$
declare
  by_id jsonb := '{}';
  question jsonb;
  choice jsonb;
  answer jsonb;
  cell jsonb;
  entry jsonb;
  list jsonb;
  kind text;
  pos integer := 0;
  choice_pos integer;
  row_pos integer;
  number_value integer;
  days integer;
  i integer;
  j integer;
begin
  nums := '{}';
  cells := '{}';
  if jsonb_typeof(questions) is distinct from 'array' then
    return;
  end if;
  -- Every array is walked by index, in plain expressions: a FOR over a query started an executor for each
  -- loop. The arrays are copied once out of any compression (|| '[]'), so that -> i does not decompress
  -- them again at each step.
  questions := questions || '[]'::jsonb;
  if jsonb_typeof(answers) = 'array' then
    answers := answers || '[]'::jsonb;
    if jsonb_array_length(answers) <= 8 then
      -- By question id; a later answer to the same id wins, as in jsonb_object_agg below.
      for i in 0 .. jsonb_array_length(answers) - 1 loop
        entry := answers -> i;
        if jsonb_typeof(entry) = 'object' and jsonb_typeof(entry->'questionId') = 'string' then
          by_id := by_id || jsonb_build_object(entry->>'questionId', entry->'value');
        end if;
      end loop;
    else
      select coalesce(jsonb_object_agg(item->>'questionId', item->'value'), '{}') into by_id
      from jsonb_array_elements(answers) as item
      where jsonb_typeof(item) = 'object' and jsonb_typeof(item->'questionId') = 'string';
    end if;
  end if;
  for i in 0 .. jsonb_array_length(questions) - 1 loop
    question := questions -> i;
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
      list := question->'choices';
      for choice_pos in 0 .. jsonb_array_length(list) - 1 loop
        choice := list -> choice_pos;
        if (kind = 'single_choice' and choice->>'id' = answer #>> '{}') or (kind = 'multiple_choice' and answer ? (choice->>'id')) then
          cells := array_append(cells, pos * 100000 + choice_pos);
        end if;
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
      list := question->'rows';
      for row_pos in 0 .. jsonb_array_length(list) - 1 loop
        cell := answer -> ((list -> row_pos)->>'id');
        if jsonb_typeof(cell) = 'null' then
          cells := array_append(cells, (10000 + pos) * 100000 + 1000 + row_pos);
        elsif jsonb_typeof(cell) = 'number' and (cell #>> '{}') ~ '^[0-9]{1,2}$' then
          cells := array_append(cells, pos * 100000 + row_pos * 1000 + (cell #>> '{}')::integer);
        elsif jsonb_typeof(cell) = 'string' and jsonb_typeof(question->'columns') = 'array' then
          -- The first column with that id.
          choice_pos := null;
          for j in 0 .. jsonb_array_length(question->'columns') - 1 loop
            if (question->'columns'->j)->>'id' = cell #>> '{}' then
              choice_pos := j;
              exit;
            end if;
          end loop;
          if choice_pos is not null then
            cells := array_append(cells, pos * 100000 + row_pos * 1000 + choice_pos);
          end if;
        end if;
      end loop;
    elsif kind = 'ranking' and jsonb_typeof(answer) = 'array' and jsonb_typeof(question->'choices') = 'array' then
      cells := array_append(cells, pos * 100000 + 99999);
      list := question->'choices';
      for choice_pos in 0 .. jsonb_array_length(list) - 1 loop
        -- The choice's rank: the first place (from 1) where the answer names it.
        row_pos := null;
        for j in 0 .. jsonb_array_length(answer) - 1 loop
          if answer->>j = (list -> choice_pos)->>'id' then
            row_pos := j + 1;
            exit;
          end if;
        end loop;
        if row_pos is not null and row_pos < 100 then
          cells := array_append(cells, pos * 100000 + choice_pos * 100 + row_pos);
        end if;
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
end $$;
