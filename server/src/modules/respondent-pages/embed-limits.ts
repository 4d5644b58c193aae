/**
 * How many answers one embed token takes: the browser cookie stops a person answering twice by accident, but
 * a script sends no cookie, so the shared token is also bounded per network address and in all. Counted in the
 * `rate_limits` table that the API's budgets use (fixed windows, `expire` in epoch ms), so every API process
 * draws on one count. Behind a proxy the address is the proxy's unless Express's `trust proxy` says otherwise.
 */
import { sql } from 'kysely';
import type { DbOrTx } from '../../db/database.js';

export const embedLimits = {
  /** Answers per hour from one network address (an office behind one NAT answers at a human pace). */
  perAddressPerHour: 30,
  /** Answers per minute through one embed token, from everyone. */
  perTokenPerMinute: 600,
} as const;

const hourMs = 3_600_000;
const minuteMs = 60_000;

/**
 * Spends one answer of the embed `distributionId` from `address`, or tells how long to wait. Both windows in
 * one statement; a refused answer still counts, as a refused request does for the API's budgets.
 */
export async function spendEmbedAnswer(
  db: DbOrTx,
  distributionId: string,
  address: string,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const now = Date.now();
  const windows = [
    { key: `embed:${distributionId}:${address}`.slice(0, 255), ms: hourMs, limit: embedLimits.perAddressPerHour },
    { key: `embed:${distributionId}`, ms: minuteMs, limit: embedLimits.perTokenPerMinute },
  ];
  const { rows } = await sql<{ key: string; points: number; expire: string }>`
    insert into rate_limits (key, points, expire)
    values (${windows[0]!.key}, 1, ${now + windows[0]!.ms}::bigint), (${windows[1]!.key}, 1, ${now + windows[1]!.ms}::bigint)
    on conflict (key) do update set
      points = case when rate_limits.expire <= ${now}::bigint then 1 else rate_limits.points + 1 end,
      expire = case when rate_limits.expire <= ${now}::bigint then excluded.expire else rate_limits.expire end
    returning key, points, expire`.execute(db);
  let wait = 0;
  for (const window of windows) {
    const row = rows.find((r) => r.key === window.key);
    if (row && row.points > window.limit) wait = Math.max(wait, Math.ceil((Number(row.expire) - now) / 1000));
  }
  return wait > 0 ? { ok: false, retryAfterSeconds: Math.max(1, wait) } : { ok: true };
}
