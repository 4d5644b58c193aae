/**
 * Admin CLI — the organization settings of this service and, on Citus, where tenants live, for operators
 * (`npm run cli -- <command>`).
 * Uses DATABASE_URL, or the embedded PostgreSQL under DATA_DIR (shared with a running `npm start`).
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../server/src/config.js';
import {
  isolateTenant,
  NotOnCitusError,
  TenantCommandRefused,
  TenantIsolationFailed,
  tenantPlacement,
  tenantSpread,
  type TenantPlacement,
} from '../server/src/db/citus-tenants.js';
import { onCitus } from '../server/src/db/citus.js';
import { openDatabase, type Db } from '../server/src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../server/src/db/embedded.js';
import { migrateToLatest } from '../server/src/db/migrate.js';
import type { Environment, Plan } from '../server/src/db/schema.js';
import { insertKey, listKeys, revokeKeyById } from '../server/src/modules/api-keys/index.js';
import { toApiKey } from '../server/src/modules/api-keys/index.js';
import {
  findOrganization,
  insertOrganization,
  listOrganizations,
  plans,
  updateOrganization,
} from '../server/src/modules/organizations/index.js';

const usage = `Usage: npm run cli -- <command> [options] [--json]

Commands:
  orgs create --name NAME --plan FREE|STARTER|PRO|BUSINESS
  orgs list
  orgs set-plan --org ORG_ID --plan FREE|STARTER|PRO|BUSINESS
  orgs set-limits --org ORG_ID [--per-minute N] [--per-day N]   (omit a value to restore the plan's)
  keys create --org ORG_ID --env LIVE|TEST --scopes 'SCOPE[,SCOPE…]' --name NAME [--expires-at ISO_DATE]
  keys list --org ORG_ID --env LIVE|TEST
  keys revoke --id KEY_ID
  tenants where --org ORG_ID      (Citus) the node and shard group that hold the organization's rows
  tenants spread                  (Citus) shard groups, organizations, rows and bytes per node
  tenants isolate --org ORG_ID [--to-node HOST:PORT | --same-node]
                                  (Citus) move the organization to a shard group of its own, online

--json prints machine-readable output (including the one-time key value of keys create).
tenants isolate splits the organization's shard group onto another worker (the one with the fewest groups, or
--to-node), without blocking its reads or writes; it needs wal_level = logical on every node. --same-node keeps it
on its node (Citus's isolate_tenant_to_new_shard), which can stall under concurrent updates: use a quiet moment.`;

class UsageError extends Error {}

const scopePattern = /^(\*|(surveys|responses|analytics|webhooks|respondents):(\*|[a-z]+))$/;

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function planOf(value: string): Plan {
  if (!(plans as readonly string[]).includes(value)) throw new UsageError(`--plan must be one of ${plans.join(', ')}`);
  return value as Plan;
}

function envOf(value: string): Environment {
  if (value !== 'LIVE' && value !== 'TEST') throw new UsageError('--env must be LIVE or TEST');
  return value;
}

function limitOf(value: unknown, name: string): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}

function bytes(n: number): string {
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function placementText(p: TenantPlacement): string {
  const [min, max] = p.hashRange;
  const range = min === max ? `hash ${min}` : `hash ${min}..${max}`;
  const company = p.isolated
    ? 'alone'
    : `with ${p.otherOrganizations} other organization${p.otherOrganizations === 1 ? '' : 's'}`;
  return `shard group ${p.shardId} (${range}) on ${p.node}, ${company}`;
}

function shardsText(p: TenantPlacement): string {
  return Object.entries(p.shards)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([table, shard]) => `  ${table}\t${shard}`)
    .join('\n');
}

async function existingOrganization(db: Db, values: Record<string, unknown>): Promise<string> {
  const organizationId = required(values, 'org');
  if (!(await findOrganization(db, organizationId))) throw new UsageError(`No organization ${organizationId}`);
  return organizationId;
}

async function run(
  db: Db,
  command: string,
  values: Record<string, string | boolean | undefined>,
): Promise<{ json: unknown; text: string }> {
  // Before anything else: off Citus, the answer to every tenants command is the same.
  if (command.startsWith('tenants ') && !(await onCitus(db))) throw new NotOnCitusError();
  switch (command) {
    case 'orgs create': {
      const org = await insertOrganization(db, {
        name: required(values, 'name'),
        plan: planOf(required(values, 'plan')),
      });
      return { json: org, text: `Created organization ${org.id} (${org.name}, ${org.plan}).` };
    }
    case 'orgs list': {
      const orgs = await listOrganizations(db);
      return { json: orgs, text: orgs.map((o) => `${o.id}\t${o.plan}\t${o.name}`).join('\n') || 'No organizations.' };
    }
    case 'orgs set-plan': {
      const org = await updateOrganization(db, required(values, 'org'), { plan: planOf(required(values, 'plan')) });
      if (!org) throw new UsageError(`No organization ${String(values.org)}`);
      return { json: org, text: `Organization ${org.id} is now on ${org.plan}.` };
    }
    case 'orgs set-limits': {
      const org = await updateOrganization(db, required(values, 'org'), {
        rate_limit_per_minute: limitOf(values['per-minute'], 'per-minute'),
        rate_limit_per_day: limitOf(values['per-day'], 'per-day'),
      });
      if (!org) throw new UsageError(`No organization ${String(values.org)}`);
      return {
        json: org,
        text: `Organization ${org.id}: ${org.rate_limit_per_minute ?? 'plan'}/minute, ${org.rate_limit_per_day ?? 'plan'}/day.`,
      };
    }
    case 'keys create': {
      const organizationId = required(values, 'org');
      if (!(await findOrganization(db, organizationId))) throw new UsageError(`No organization ${organizationId}`);
      const scopes = required(values, 'scopes')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = scopes.filter((s) => !scopePattern.test(s));
      if (scopes.length === 0 || bad.length > 0)
        throw new UsageError(`--scopes: invalid scope(s) ${bad.join(', ') || '(none given)'}`);
      const expires = values['expires-at'];
      const expiresAt = typeof expires === 'string' ? new Date(expires) : null;
      if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 date');
      const { row, key } = await insertKey(db, {
        organizationId,
        environment: envOf(required(values, 'env')),
        name: required(values, 'name'),
        scopes,
        expiresAt,
      });
      return {
        json: { ...toApiKey(row), key },
        text: `Created key ${row.id}. Copy it now, it is not shown again:\n${key}`,
      };
    }
    case 'keys list': {
      const { rows } = await listKeys(
        db,
        { organizationId: required(values, 'org'), environment: envOf(required(values, 'env')) },
        { includeRevoked: true, limit: 1000, offset: 0 },
      );
      const keys = rows.map(toApiKey);
      return {
        json: keys,
        text:
          keys.map((k) => `${k.id}\t${k.maskedKey}\t${k.revokedAt ? 'revoked' : 'active'}\t${k.name}`).join('\n') ||
          'No keys.',
      };
    }
    case 'keys revoke': {
      const id = required(values, 'id');
      const revoked = await revokeKeyById(db, id);
      return {
        json: { id, revoked },
        text: revoked ? `Revoked ${id}.` : `${id} does not exist or was already revoked.`,
      };
    }
    case 'tenants where': {
      const placement = await tenantPlacement(db, await existingOrganization(db, values));
      return {
        json: placement,
        text: `Organization ${placement.organizationId}: ${placementText(placement)}. Shards:\n${shardsText(placement)}`,
      };
    }
    case 'tenants spread': {
      const nodes = await tenantSpread(db);
      return {
        json: nodes,
        text: [
          'node\tshard groups\torganizations\trows\tsize',
          ...nodes.map((n) => `${n.node}\t${n.shardGroups}\t${n.organizations}\t${n.rows}\t${bytes(n.bytes)}`),
        ].join('\n'),
      };
    }
    case 'tenants isolate': {
      const toNode = values['to-node'];
      const sameNode = values['same-node'] === true;
      if (typeof toNode === 'string' && sameNode) throw new UsageError('--to-node and --same-node exclude each other');
      const result = await isolateTenant(db, await existingOrganization(db, values), {
        ...(typeof toNode === 'string' ? { toNode } : {}),
        sameNode,
      });
      const { before, after } = result;
      return {
        json: result,
        text: result.isolated
          ? `Isolated organization ${after.organizationId} in ${(result.durationMs / 1000).toFixed(1)} s: now ` +
            `${placementText(after)} (was ${placementText(before)}). Shards:\n${shardsText(after)}`
          : `Organization ${after.organizationId} already has a shard group of its own: ${placementText(after)}.`,
      };
    }
    default:
      throw new UsageError(`Unknown command "${command}"`);
  }
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        org: { type: 'string' },
        env: { type: 'string' },
        scopes: { type: 'string' },
        id: { type: 'string' },
        'expires-at': { type: 'string' },
        'per-minute': { type: 'string' },
        'per-day': { type: 'string' },
        'to-node': { type: 'string' },
        'same-node': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (positionals.length !== 2) {
    console.error(usage);
    return 2;
  }
  const config = loadConfig([]);
  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
    url = embedded.url;
  }
  const database = openDatabase(url, 2);
  try {
    await migrateToLatest(database.db);
    const result = await run(database.db, positionals.join(' '), values);
    console.log(values.json ? JSON.stringify(result.json, null, 2) : result.text);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${usage}`);
      return 2;
    }
    if (error instanceof NotOnCitusError) {
      console.error(`${error.message} The tenants commands need Citus (README, "Scaling out").`);
      return 2;
    }
    if (error instanceof TenantCommandRefused) {
      console.error(error.message);
      return 2;
    }
    if (error instanceof TenantIsolationFailed) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await database.close();
    await embedded?.stop();
  }
}

process.exitCode = await main();
