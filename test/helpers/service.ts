/**
 * The service under test: the real server (API and worker) in this process, on its own database, listening on
 * 127.0.0.1 with response validation on; plus fixtures for organizations and keys, and SDK clients.
 */
import { createClient, type SurveyServiceClient } from '@survey-service/sdk';
import { loadConfig, type Config } from '../../server/src/config.js';
import type { Environment, Plan } from '../../server/src/db/schema.js';
import { createLogger, type Logger } from '../../server/src/logger.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { startProcess, type RunningProcess } from '../../server/src/start.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface TestService {
  url: string;
  database: TestDatabase;
  service: RunningProcess;
  db: RunningProcess['deps']['db'];
  createOrganization(plan?: Plan, name?: string): Promise<string>;
  createKey(
    organizationId: string,
    options?: { environment?: Environment; scopes?: string[]; expiresAt?: Date },
  ): Promise<{ id: string; key: string }>;
  /** An organization with a full-scope key per environment. */
  createTenant(plan?: Plan): Promise<{ organizationId: string; liveKey: string; testKey: string }>;
  client(apiKey: string): SurveyServiceClient;
  close(): Promise<void>;
}

export async function startTestService(overrides: Partial<Config> = {}, logger?: Logger): Promise<TestService> {
  const database = await createTestDatabase();
  const config: Config = {
    ...loadConfig([]),
    port: 0,
    host: '127.0.0.1',
    validateResponses: true,
    role: 'all',
    shutdownGraceMs: 5_000,
    allowLoopbackWebhooks: true,
    databasePoolSize: 5,
    ...overrides,
  };
  const log = logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const service = await startProcess(config, database.url, log);
  const url = service.url!;
  const db = service.deps.db;

  const createOrganization: TestService['createOrganization'] = async (plan = 'PRO', name = 'Test organization') =>
    (await insertOrganization(db, { name, plan })).id;
  const createKey: TestService['createKey'] = async (organizationId, options = {}) => {
    const { row, key } = await insertKey(db, {
      organizationId,
      environment: options.environment ?? 'LIVE',
      name: 'test key',
      scopes: options.scopes ?? ['*'],
      expiresAt: options.expiresAt ?? null,
    });
    return { id: row.id, key };
  };

  return {
    url,
    database,
    service,
    db,
    createOrganization,
    createKey,
    async createTenant(plan = 'PRO') {
      const organizationId = await createOrganization(plan);
      const live = await createKey(organizationId, { environment: 'LIVE' });
      const test = await createKey(organizationId, { environment: 'TEST' });
      return { organizationId, liveKey: live.key, testKey: test.key };
    },
    client: (apiKey: string) => createClient({ apiKey, baseUrl: url, retry: { maxRetries: 0 } }),
    async close() {
      await service.close();
      await database.release();
    },
  };
}
