/**
 * CSV formula escaping of response exports. Frozen: later changes go into new files.
 *
 * `exports.escape_formulas`: whether the CSV writer prefixes user-supplied text cells that a spreadsheet would
 * evaluate as a formula with `'` (the request's `escapeFormulas`). The job that writes the file runs later in a
 * worker and reads its options from this row, so the option is stored with the export. Only the CSV writer reads
 * it. Exports created before this migration (possibly still queued) get `true`: the safe reading of "not asked".
 * A constant default adds the column without rewriting the table.
 */
import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('exports')
    .addColumn('escape_formulas', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('exports').dropColumn('escape_formulas').execute();
}
