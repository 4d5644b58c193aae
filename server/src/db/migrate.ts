/**
 * Runs the migrations in `./migrations` (one date-prefixed file each) with Kysely's Migrator. Safe to call
 * from several processes at once: the Migrator takes a PostgreSQL advisory lock.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator } from 'kysely';
import type { Db } from './database.js';

const migrationFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
