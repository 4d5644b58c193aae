/**
 * Exports defined by PostgreSQL snapshots instead of clocks (read-your-writes, exactly once). Frozen: later
 * changes go into new files.
 *
 * - `responses.xact_id`, `response_deletions.xact_id` (xid8): the transaction that wrote the row, filled by the
 *   column default `pg_current_xact_id()`, so every writer stamps it without naming it (the submission, the
 *   distribution answer page, the deletion trigger, bulk loads). The top-level transaction's id, also inside a
 *   savepoint. The column is added without a default and the default set afterwards: a volatile default in
 *   `add column` would rewrite the table under an exclusive lock (each existing row gets a value); this way
 *   the change is catalogue-only and existing rows keep NULL, which means "committed before any export
 *   snapshot" (every export's snapshot sees them, no increment's "new" set holds them).
 * - `responses_by_xact`, `response_deletions_by_xact`: tenant-led indexes for increments — a range on xact_id
 *   from the previous snapshot's xmin to the new snapshot's xmax, visibility checked per row on that range. The
 *   index builds take a SHARE lock on their table (writes wait for the build; a migration runs in a transaction,
 *   so not CONCURRENTLY).
 * - `exports.snapshot` (pg_snapshot): `pg_current_snapshot()` of the statement that accepts the export (the
 *   request's transaction), and `snapshot_at`, when it was taken (the watermark shown to people).
 *   `previous_snapshot` / `previous_before`: for an increment (`sinceExport`), what the previous export covered
 *   (its snapshot and its `submitted_before`), which this export leaves out.
 *
 * Exports still pending get this migration's snapshot (they had none yet). Exports already processing keep their
 * clock watermark and no snapshot: they finish, and their successors continue from that watermark, by the old
 * time rule (see modules/exports/repository.ts, `Scope`).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table responses add column xact_id xid8`.execute(db);
  await sql`alter table responses alter column xact_id set default pg_current_xact_id()`.execute(db);
  await sql`create index responses_by_xact on responses (organization_id, environment, survey_id, xact_id)`.execute(db);

  await sql`alter table response_deletions add column xact_id xid8`.execute(db);
  await sql`alter table response_deletions alter column xact_id set default pg_current_xact_id()`.execute(db);
  await sql`create index response_deletions_by_xact on response_deletions (organization_id, environment, survey_id, xact_id)`.execute(db);

  await sql`alter table exports
    add column snapshot pg_snapshot,
    add column snapshot_at timestamptz,
    add column previous_snapshot pg_snapshot,
    add column previous_before timestamptz`.execute(db);
  await sql`update exports set snapshot = pg_current_snapshot(), snapshot_at = date_trunc('milliseconds', clock_timestamp())
    where status = 'pending' and watermark is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table exports drop column snapshot, drop column snapshot_at, drop column previous_snapshot, drop column previous_before`.execute(db);
  await sql`drop index if exists response_deletions_by_xact`.execute(db);
  await sql`alter table response_deletions drop column xact_id`.execute(db);
  await sql`drop index if exists responses_by_xact`.execute(db);
  await sql`alter table responses drop column xact_id`.execute(db);
}
