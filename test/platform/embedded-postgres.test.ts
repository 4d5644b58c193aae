/**
 * The embedded PostgreSQL starts from a clone inside a folder other users cannot enter (a fresh `mktemp -d`,
 * mode 0700). As root the server runs as the `postgres` OS user, which then cannot reach the folder; the
 * binaries and data move to a reachable place, linked from the data folder.
 */
import { mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { freePortBelowEphemeral } from '../helpers/ports.js';

describe('embedded PostgreSQL', () => {
  it('starts, serves and stops from a folder only its owner can enter', async () => {
    const closed = mkdtempSync(path.join(tmpdir(), 'closed-clone-'));
    expect(statSync(closed).mode & 0o777).toBe(0o700);
    const dataDir = path.join(closed, 'repo', '.data');
    const server = await startEmbeddedPostgres({ dataDir, port: await freePortBelowEphemeral(), database: 'probe' });
    try {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query<{ user: string }>('select current_user as user');
      await client.end();
      expect(rows[0]?.user).toBe('postgres');
      if (userInfo().uid === 0) {
        // The data lives where the postgres user can reach it, owned by it, linked from the clone.
        expect(readlinkSync(path.join(dataDir, 'postgres'))).toBe(server.dataDir);
        expect(statSync(server.dataDir).uid).not.toBe(0);
      } else {
        expect(server.dataDir).toBe(path.join(dataDir, 'postgres'));
      }
    } finally {
      await server.stop();
      const clusterDir = server.dataDir;
      rmSync(closed, { recursive: true, force: true });
      if (clusterDir.startsWith('/var/tmp/')) rmSync(clusterDir, { recursive: true, force: true });
    }
  }, 120_000);
});
