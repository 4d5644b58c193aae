/**
 * What `/k` decides about a typed code (respondent-pages' kiosk-page.ts shows it): where the code leads, and how
 * many wrong codes are let through.
 *
 * A code of 40 secret bits is safe only while guessing is slow, so tries are counted before the lookup, in the
 * `rate_limits` table that the API's budgets and the embed limits use (fixed one-minute windows, every process
 * shares the count): per network address, and per distribution (its prefix names it even when the rest is wrong),
 * so that many addresses together cannot guess faster than one distribution's budget either. A try is spent first
 * and given back when the code was right, so that parallel requests cannot look up more codes than the budget, and
 * a busy kiosk (one address, a queue of people with right codes) is never slowed by the people who type well.
 * An address over its budget spends nothing of the distribution's, so it cannot lock the distribution out alone.
 */
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import type { DbOrTx } from '../../db/database.js';
import { tenantOfRow, type Tenant } from '../../db/tenant.js';
import { accessCodeHash, parseCode } from './access-codes.js';
import * as repo from './repository.js';
import { linkKeyOf, personalToken } from './tokens.js';

export const kioskLimits = {
  /** Wrong codes per minute from one network address. */
  perAddressPerMinute: 10,
  /** Wrong codes per minute for one distribution's codes, from every address together. */
  perDistributionPerMinute: 30,
} as const;

const minuteMs = 60_000;

export type KioskOutcome =
  /** Not a code at all (length, characters): nothing was looked up or counted. */
  | { kind: 'malformed' }
  | { kind: 'throttled'; retryAfterSeconds: number }
  | { kind: 'wrong' }
  /** Its answer is stored: the code is spent. */
  | { kind: 'used' }
  | { kind: 'open'; token: string };

interface Window {
  key: string;
  limit: number;
}

/** Spends one try of `window`; how long to wait when that was one too many. */
async function spend(db: DbOrTx, window: Window, now: number): Promise<number | undefined> {
  const { rows } = await sql<{ points: number; expire: string }>`
    insert into rate_limits (key, points, expire) values (${window.key}, 1, ${now + minuteMs}::bigint)
    on conflict (key) do update set
      points = case when rate_limits.expire <= ${now}::bigint then 1 else rate_limits.points + 1 end,
      expire = case when rate_limits.expire <= ${now}::bigint then excluded.expire else rate_limits.expire end
    returning points, expire`.execute(db);
  const row = rows[0]!;
  return row.points > window.limit ? Math.max(1, Math.ceil((Number(row.expire) - now) / 1000)) : undefined;
}

/** Gives back the tries of a right code (in the window they were spent in). */
async function giveBack(db: DbOrTx, windows: readonly Window[], now: number): Promise<void> {
  await sql`update rate_limits set points = greatest(points - 1, 0)
    where key = any(${windows.map((w) => w.key)}::text[]) and expire > ${now}::bigint`.execute(db);
}

/** Where a typed code leads, its tries counted from `address`. */
export async function openByCode(
  db: DbOrTx,
  config: Pick<Config, 'linkSecret'>,
  typed: string,
  address: string,
): Promise<KioskOutcome> {
  const code = parseCode(typed);
  if (!code) return { kind: 'malformed' };
  const now = Date.now();
  const byAddress: Window = { key: `kiosk:address:${address}`.slice(0, 255), limit: kioskLimits.perAddressPerMinute };
  const addressWait = await spend(db, byAddress, now);
  if (addressWait !== undefined) return { kind: 'throttled', retryAfterSeconds: addressWait };
  const prefix = await repo.findKioskPrefix(db, code.prefix);
  if (!prefix) return { kind: 'wrong' };
  const byDistribution: Window = {
    key: `kiosk:distribution:${prefix.distribution_id}`,
    limit: kioskLimits.perDistributionPerMinute,
  };
  const distributionWait = await spend(db, byDistribution, now);
  if (distributionWait !== undefined) return { kind: 'throttled', retryAfterSeconds: distributionWait };
  const tenant: Tenant = tenantOfRow(prefix);
  const key = await linkKeyOf(db, config.linkSecret);
  const recipient = await repo.findRecipientByAccessCode(
    db,
    tenant,
    prefix.distribution_id,
    accessCodeHash(key, prefix.distribution_id, code.secret),
  );
  if (!recipient) return { kind: 'wrong' };
  await giveBack(db, [byAddress, byDistribution], now);
  if (recipient.status === 'responded') return { kind: 'used' };
  return { kind: 'open', token: personalToken(key, tenant, prefix.distribution_id, recipient.external_id) };
}
