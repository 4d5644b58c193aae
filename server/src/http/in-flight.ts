/**
 * Work started by requests, so that shutdown can wait for it. `server.close()` only waits for connections: a
 * client that hangs up leaves its handler running, and that handler must finish before the pools close.
 */
export class InFlightWork {
  private readonly running = new Set<Promise<unknown>>();

  run<T>(work: () => Promise<T>): Promise<T> {
    const promise = work();
    this.running.add(promise);
    const forget = () => this.running.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** Resolves when everything started so far has settled, or after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.running]), timeout]);
    clearTimeout(timer);
  }
}
