/**
 * Runs the migrations in `./migrations` (one date-prefixed file each) with Kysely's Migrator. Safe to call
 * from several processes at once: the Migrator takes a PostgreSQL advisory lock.
 *
 * The provider imports the files from this module (not from inside Kysely, as FileMigrationProvider does), so
 * the `.ts` migrations load wherever this code runs: under tsx and under vitest's module runner alike.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { hintShardStatistics, onCitus } from './citus.js';
import type { Db } from './database.js';

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

export async function migrateToLatest(db: Db): Promise<string[]> {
  const applied = await migrate(db, (migrator) => migrator.migrateToLatest());
  // What Citus cannot take in a migration's transaction (see hintShardStatistics).
  if (await onCitus(db)) await hintShardStatistics(db);
  return applied;
}

/** Migrates up or down to the migration `name` (so that a test can write data under an earlier schema). */
export function migrateTo(db: Db, name: string): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateTo(name));
}

/** The names of the migrations `step` ran, or its error. */
async function migrate(db: Db, step: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  const { error, results } = await step(new Migrator({ db, provider: folderProvider }));
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
