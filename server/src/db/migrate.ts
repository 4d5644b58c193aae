/**
 * Runs the migrations in `./migrations` (one date-prefixed file each) with Kysely's Migrator, then the repeatable
 * step (./repeatable.ts: every module's SQL functions and triggers, from `modules/<module>/sql/`), in one transaction.
 * Safe to call from several processes at once: the transaction holds the Migrator's advisory lock until it commits.
 *
 * The provider imports the files from this module (not from inside Kysely, as FileMigrationProvider does), so
 * the `.ts` migrations load wherever this code runs: under tsx and under vitest's module runner alike.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, sql, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { hintShardStatistics, onCitus } from './citus.js';
import type { Db } from './database.js';
import { applyRepeatableSql, forgetRepeatableSql, migrationLockId } from './repeatable.js';

const migrationFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

const folderProvider: MigrationProvider = {
  async getMigrations() {
    const migrations: Record<string, Migration> = {};
    for (const file of (await readdir(migrationFolder)).sort()) {
      if (!/\.(ts|js)$/.test(file) || file.endsWith('.d.ts')) continue;
      migrations[file.replace(/\.(ts|js)$/, '')] = (await import(
        pathToFileURL(path.join(migrationFolder, file)).href
      )) as Migration;
    }
    return migrations;
  },
};

/** The migrations that ran and the module SQL files that were applied (see repeatable.ts). */
export interface MigrationOutcome {
  migrations: string[];
  repeatable: string[];
}

/** Migrates to the latest migration, then applies the module SQL files that changed; returns the migrations run. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  return (await migrateToLatestWithOutcome(db)).migrations;
}

/** As migrateToLatest, also naming the module SQL files that were applied. */
export async function migrateToLatestWithOutcome(db: Db): Promise<MigrationOutcome> {
  const outcome = await migrate(db, (migrator) => migrator.migrateToLatest(), applyRepeatableSql);
  // What Citus cannot take in a migration's transaction (see hintShardStatistics).
  if (await onCitus(db)) await hintShardStatistics(db);
  return outcome;
}

/**
 * Migrates up or down to the migration `name` (so that a test can write data under an earlier schema). The module
 * SQL files are not applied: their functions may need the latest schema. Their recorded checksums are forgotten
 * instead, since the migrations that ran may have left older texts of their functions, so the next migrateToLatest
 * applies every file again.
 */
export async function migrateTo(db: Db, name: string): Promise<string[]> {
  const outcome = await migrate(
    db,
    (migrator) => migrator.migrateTo(name),
    async (tx) => {
      await forgetRepeatableSql(tx);
      return [];
    },
  );
  return outcome.migrations;
}

/**
 * Runs `step` and then `after` on one connection, in one transaction that first takes the Migrator's advisory lock
 * (as a transaction lock, so it is held until the commit; the Migrator takes it again as a session lock, which a
 * session holding it gets at once, and releases that one before the commit). The Migrator runs without a
 * transaction of its own, inside this one: as before, the pending migrations are one transaction, now together
 * with the repeatable step. (So a migration never calls `db.transaction()`: its COMMIT would end this one.)
 */
async function migrate(
  db: Db,
  step: (migrator: Migrator) => Promise<MigrationResultSet>,
  after: (tx: Db) => Promise<string[]>,
): Promise<MigrationOutcome> {
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    try {
      await sql`select pg_advisory_xact_lock(${sql.lit(migrationLockId)})`.execute(connection);
      // Citus runs a function command only when the transaction's distributed work before it was sequential, and the
      // module files follow whichever migrations ran: the whole transaction is sequential, as every migration since
      // 2026-11-26T0500_distribute_on_citus already made it on a database migrated from scratch.
      if (await onCitus(connection)) {
        await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(connection);
      }
      const { error, results } = await step(
        new Migrator({ db: connection, provider: folderProvider, disableTransactions: true }),
      );
      if (error) throw error instanceof Error ? error : new Error(String(error));
      const migrations = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
      const repeatable = await after(connection);
      await sql`commit`.execute(connection);
      return { migrations, repeatable };
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
}
