/**
 * Every setting of the service, read once from the environment. The README's "Configuration" table
 * documents each variable; keep the two in step.
 */

export type Role = 'all' | 'api' | 'worker';

export interface Config {
  port: number;
  host: string;
  /** Unset: an embedded PostgreSQL is started (see db/embedded.ts). */
  databaseUrl: string | undefined;
  embeddedPostgresPort: number;
  dataDir: string;
  role: Role;
  logLevel: string;
  /** Response validation against the contract: on unless NODE_ENV=production (tests always turn it on). */
  validateResponses: boolean;
  /** Public base URL, used in links the service prints or hands out; unset: the address it listens on. */
  publicBaseUrl: string | undefined;
  /** Pool size of each process's PostgreSQL pool. */
  databasePoolSize: number;
  /** How long SIGTERM waits for in-flight requests and jobs before exiting anyway. */
  shutdownGraceMs: number;
  /** How long opening a PostgreSQL connection may take before the request gets 503 (never a hang). */
  databaseConnectTimeoutMs: number;
  /** The cap of the backoff between reconnection attempts of a dedicated (LISTEN) connection. */
  databaseReconnectMaxDelayMs: number;
  /** How long an HTTP connection may stay idle between requests: above the usual client and proxy idle timeouts. */
  keepAliveTimeoutMs: number;
  /** Development and tests only: lets webhooks target loopback addresses. */
  allowLoopbackWebhooks: boolean;
  /** Failed authentications per source address and minute before 429 (counted in memory, per process). */
  authFailuresPerMinute: number;
  /** Idempotency: how long a running key's claim holds before a retry may take over a crashed request. */
  idempotencyLeaseMs: number;
  /** Idempotency: how long a duplicate waits for the running original before 409 idempotency_in_progress. */
  idempotencyWaitMs: number;
  /** API processes `npm start` runs (node:cluster workers sharing the port); 1 runs the API in the main process. */
  apiProcesses: number;
  /** Webhook retry delays in ms (index 0 = first attempt); the Standard Webhooks schedule unless a test shortens it. */
  webhookRetryScheduleMs: readonly number[];
  /** Per-attempt timeout of a webhook delivery (10 s, the contract's promise; tests may shorten it). */
  webhookTimeoutMs: number;
  /** Distribution e-mail: SMTP server URL (`smtp://user:pass@host:587`, `smtps://…`); unset: the outbox folder. */
  smtpUrl: string | undefined;
  /** Sender of distribution e-mails. */
  mailFrom: string;
  /** Distribution e-mails per second per sending worker; 0 = no limit. */
  mailRatePerSecond: number;
  /** Where messages go (one .eml file each) when SMTP_URL is unset. */
  mailOutboxDir: string;
  /** Key personal survey links are derived from (HMAC); unset: a random key kept in the database. */
  linkSecret: string | undefined;
  /** How often a held distribution (survey paused or not launched yet at the send time) checks again. */
  distributionHoldRecheckSeconds: number;
  /** The AI provider (modules/ai): built-in offline by default, or an OpenAI-compatible chat-completions API. */
  ai: AiConfig;
}

export interface AiConfig {
  provider: 'offline' | 'openai-compatible';
  /** Base URL of the OpenAI-compatible API, up to and including `/v1` (for example https://api.openai.com/v1). */
  baseUrl: string | undefined;
  /** Sent as a bearer token; never logged. */
  apiKey: string | undefined;
  model: string | undefined;
  /** Time limit of one model call (and of generateSurvey as a whole). */
  timeoutMs: number;
  /** Provider calls an analysis job makes before it fails, and the first back-off between them (doubling). */
  maxAttempts: number;
  retryBaseMs: number;
}

function aiFrom(): AiConfig {
  const provider = process.env.AI_PROVIDER || 'offline';
  if (provider !== 'offline' && provider !== 'openai-compatible')
    throw new Error(`AI_PROVIDER must be offline or openai-compatible, got "${provider}"`);
  const config: AiConfig = {
    provider,
    baseUrl: process.env.AI_BASE_URL || undefined,
    apiKey: process.env.AI_API_KEY || undefined,
    model: process.env.AI_MODEL || undefined,
    timeoutMs: intFrom('AI_TIMEOUT_MS', 30_000),
    maxAttempts: 4,
    retryBaseMs: 2_000,
  };
  if (provider === 'openai-compatible' && (!config.baseUrl || !config.model)) {
    throw new Error('AI_PROVIDER=openai-compatible needs AI_BASE_URL and AI_MODEL');
  }
  return config;
}

/** The webhook retry schedule, after the header's rules (see modules/webhooks/schedule.ts). */
const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;

/** Delay before attempt n+1 (index n); index 0 is the first attempt's delay (none). */
export const standardSchedule: readonly number[] = [
  0,
  5 * second,
  5 * minute,
  30 * minute,
  2 * hour,
  5 * hour,
  10 * hour,
  10 * hour,
];

/** WEBHOOK_RETRY_SCHEDULE_MS: comma-separated delays in milliseconds, the first one 0. */
export function parseSchedule(raw: string | undefined): readonly number[] {
  if (raw === undefined || raw.trim() === '') return standardSchedule;
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.some((d) => !Number.isInteger(d) || d < 0) || delays[0] !== 0) {
    throw new Error(
      `WEBHOOK_RETRY_SCHEDULE_MS must be comma-separated non-negative integers starting with 0, got "${raw}"`,
    );
  }
  return delays;
}

function intFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function roleFrom(argv: readonly string[]): Role {
  const flag = argv.indexOf('--role');
  const raw = flag >= 0 ? argv[flag + 1] : process.env.ROLE;
  if (raw === undefined || raw === '' || raw === 'all') return 'all';
  if (raw === 'api' || raw === 'worker') return raw;
  throw new Error(`--role / ROLE must be api, worker or all, got "${raw}"`);
}

export function loadConfig(argv: readonly string[] = process.argv.slice(2)): Config {
  const port = intFrom('PORT', 3000);
  const production = process.env.NODE_ENV === 'production';
  return {
    port,
    host: process.env.HOST ?? '127.0.0.1',
    databaseUrl: process.env.DATABASE_URL || undefined,
    embeddedPostgresPort: intFrom('EMBEDDED_PG_PORT', 54329),
    dataDir: process.env.DATA_DIR ?? '.data',
    role: roleFrom(argv),
    logLevel: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
    validateResponses: process.env.VALIDATE_RESPONSES ? process.env.VALIDATE_RESPONSES === 'true' : !production,
    publicBaseUrl: process.env.PUBLIC_BASE_URL || undefined,
    databasePoolSize: intFrom('DATABASE_POOL_SIZE', 10),
    shutdownGraceMs: intFrom('SHUTDOWN_GRACE_MS', 15_000),
    databaseConnectTimeoutMs: Math.max(1, intFrom('DATABASE_CONNECT_TIMEOUT_MS', 5_000)),
    databaseReconnectMaxDelayMs: Math.max(1, intFrom('DATABASE_RECONNECT_MAX_DELAY_MS', 2_000)),
    keepAliveTimeoutMs: Math.max(1, intFrom('KEEP_ALIVE_TIMEOUT_MS', 65_000)),
    allowLoopbackWebhooks: process.env.ALLOW_LOOPBACK_WEBHOOKS
      ? process.env.ALLOW_LOOPBACK_WEBHOOKS === 'true'
      : !production,
    authFailuresPerMinute: intFrom('AUTH_FAILURES_PER_MINUTE', 300),
    apiProcesses: Math.max(1, intFrom('API_PROCESSES', 1)),
    idempotencyLeaseMs: Math.max(1, intFrom('IDEMPOTENCY_LEASE_MS', 30_000)),
    idempotencyWaitMs: intFrom('IDEMPOTENCY_WAIT_MS', 10_000),
    webhookRetryScheduleMs: parseSchedule(process.env.WEBHOOK_RETRY_SCHEDULE_MS),
    webhookTimeoutMs: intFrom('WEBHOOK_TIMEOUT_MS', 10_000),
    smtpUrl: process.env.SMTP_URL || undefined,
    mailFrom: process.env.MAIL_FROM || 'Survey Service <surveys@localhost>',
    mailRatePerSecond: intFrom('MAIL_RATE_PER_SECOND', 50),
    mailOutboxDir: process.env.MAIL_OUTBOX_DIR || `${process.env.DATA_DIR ?? '.data'}/outbox`,
    linkSecret: process.env.LINK_SECRET || undefined,
    distributionHoldRecheckSeconds: intFrom('DISTRIBUTION_HOLD_RECHECK_SECONDS', 60),
    ai: aiFrom(),
  };
}
