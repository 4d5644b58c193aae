/**
 * A statement that Citus planned for a shard which a move (tenant isolation, rebalancing) replaced before it ran
 * fails at the switch: `could not find valid entry for shard …`, or SQLSTATE 40001 `shard for the given value does
 * not exist`. Its transaction is rolled back whole, and the same work planned again routes to the new shard. The
 * request path runs a handler again once for such a failure, so a client never sees a move; any other error
 * passes through untouched. On one PostgreSQL these errors do not occur (40001 only under SERIALIZABLE or
 * REPEATABLE READ, which the service does not use), so this changes nothing there.
 */
const RETRY_DELAY_MS = 50;

export function isShardMoved(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '40001') return true;
  return (
    typeof message === 'string' &&
    /could not find valid entry for shard|shard for the given value does not exist/.test(message)
  );
}

/** Runs `work`, and once more if it failed because a shard it used moved meanwhile. */
export async function onceMoreIfShardMoved<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isShardMoved(error)) throw error;
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
    return work();
  }
}
