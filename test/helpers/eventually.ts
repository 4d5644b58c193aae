/**
 * The one way the tests wait for something to happen: poll a check until it answers. Use it instead of a fixed
 * sleep, which is too short on a loaded machine and too long everywhere else.
 *
 * A test that asserts that something did NOT happen (no retry arrived, nothing else was logged) must first wait for
 * an observable that proves the work is over, not for a while: a later event that must come after, a counter, a
 * database row written in the same transaction. Sleeping first passes without testing anything on a slow machine.
 */

/**
 * Calls `check` until it returns a value other than `undefined` or `false`, and resolves with that value; the
 * value is what was waited for (a row, a list, `true`), so the caller can go on asserting on it.
 *
 * - `timeoutMs` (15 s): then it rejects with an Error named `TimeoutError` saying `what` it waited for. `what`
 *   may be a function, called only then, to describe the state last seen.
 * - `intervalMs` (50 ms): the pause between two checks; shorter to catch a moving state early (a job midway),
 *   longer to spare a rate limit or a loaded machine.
 * - An error thrown by `check` is not retried: it rejects at once (a state that can no longer turn right).
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  what: string | (() => string) = 'the condition',
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const error = new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
      error.name = 'TimeoutError';
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
