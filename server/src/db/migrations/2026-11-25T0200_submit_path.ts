/**
 * A submission in one statement, with no row that every submission must wait on (speed of the submit path). Frozen:
 * later changes go into new files.
 *
 * 1. `survey_response_counts`: append-only deltas of each survey's response count (+1 per response stored, −1
 *    per response deleted). `surveys.response_count` was incremented in each submission's transaction, so
 *    every submission to one survey queued on that row's lock until the one before had committed (and flushed
 *    its WAL). A survey's count is now `surveys.response_count` plus its deltas; the `surveys.fold-counts` job
 *    folds deltas into the column (one statement: sums are unchanged by it).
 * 2. `survey_service_id(prefix)`: the application's identifiers (`lib/ids.ts`: 48 bits of milliseconds and 80
 *    random bits in Crockford base32), made in SQL, so that one statement can queue an event's webhook
 *    deliveries for however many subscribers it finds.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('survey_response_counts')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();
  await sql`create index survey_response_counts_by_survey on survey_response_counts (organization_id, environment, survey_id)`.execute(db);

  await sql`
    create function survey_service_id(prefix text) returns text language plpgsql volatile as $$
    declare
      alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
      ms bigint := floor(extract(epoch from clock_timestamp()) * 1000);
      encoded text := '';
    begin
      for i in 1..10 loop
        encoded := substr(alphabet, (ms % 32)::int + 1, 1) || encoded;
        ms := ms / 32;
      end loop;
      for i in 1..16 loop
        encoded := encoded || substr(alphabet, floor(random() * 32)::int + 1, 1);
      end loop;
      return prefix || '_' || encoded;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists survey_service_id(text)`.execute(db);
  await db.schema.dropTable('survey_response_counts').ifExists().execute();
}
