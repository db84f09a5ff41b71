/**
 * Runs agent pushes in the background with at most `limit` in flight, so a reconcile never waits
 * for an agent: placement throughput is bounded by the store, not by how fast nodes start things.
 * Tasks handle their own errors; a task that throws anyway is counted and dropped.
 */
export class PushLimiter {
  private running = 0;
  private readonly waiting: Array<() => Promise<void>> = [];
  failures = 0;

  constructor(private readonly limit: number) {}

  get inFlight(): number {
    return this.running + this.waiting.length;
  }

  run(task: () => Promise<void>): void {
    this.waiting.push(task);
    this.next();
  }

  private next(): void {
    while (this.running < this.limit && this.waiting.length > 0) {
      const task = this.waiting.shift()!;
      this.running++;
      task()
        .catch(() => {
          this.failures++;
        })
        .finally(() => {
          this.running--;
          this.next();
          if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
        });
    }
  }

  private readonly idleWaiters: Array<() => void> = [];

  /** Resolves when no push is running or waiting. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
