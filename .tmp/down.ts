import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { down, up } from '../server/src/db/migrations/2026-11-25T0300_analytics_segments.js';
const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/segprof' }) }) });
if (process.argv[2] === 'up') await up(db); else await down(db);
await db.destroy();
