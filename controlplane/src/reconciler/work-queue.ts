/**
 * A keyed work queue in the style of Kubernetes' client-go workqueue, driving the reconciler:
 * - deduplicated: a key queued many times is processed once; a key that changes while it is being
 *   processed is processed again afterwards (never twice at the same time);
 * - delayed: `addAfter` queues a key later (retry timers);
 * - backed off: `addRateLimited` delays by an exponential per-key backoff with jitter, reset by `forget`;
 * - retries rate limited overall: backoffs also wait for a token of a `ratePerSecond` bucket (burst
 *   `burst`), so a storm of failures is retried at a bounded rate. As in client-go (the maximum of
 *   its per-item exponential and bucket limiters), fresh work (`add`) is not rate limited: it is
 *   bounded by `concurrency` alone. (Limiting every start capped the reconciler at 1,000 keys a
 *   second, a few hundred placements, whatever the machine could do.)
 */
export interface WorkQueueOptions {
  /** Keys processed at once. */
  readonly concurrency?: number;
  /** First backoff delay, doubled per failure of the same key. */
  readonly baseDelayMs?: number;
  /** Backoff cap. */
  readonly maxDelayMs?: number;
  /** Fraction of random jitter added to each backoff delay (0..1). */
  readonly jitter?: number;
  /** Overall retry rate limit (token bucket): retries beyond it wait for a token. */
  readonly ratePerSecond?: number;
  readonly burst?: number;
  /** Random source for jitter, replaceable in tests. */
  readonly random?: () => number;
}

export type WorkHandler = (key: string) => Promise<void>;

export class WorkQueue {
  /** Keys waiting, oldest first from `head` (a shift per start would copy the whole array). */
  private queue: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly options: Required<WorkQueueOptions>;
  private tokens: number;
  private lastRefill = Date.now();
  private stopped = false;
  private pumpScheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly handler: WorkHandler,
    options: WorkQueueOptions = {},
  ) {
    this.options = {
      concurrency: options.concurrency ?? 8,
      baseDelayMs: options.baseDelayMs ?? 250,
      maxDelayMs: options.maxDelayMs ?? 60_000,
      jitter: options.jitter ?? 0.2,
      ratePerSecond: options.ratePerSecond ?? 1_000,
      burst: options.burst ?? 2_000,
      random: options.random ?? Math.random,
    };
    this.tokens = this.options.burst;
  }

  /** Queues the key now (deduplicated). A pending delayed add of the same key is kept. */
  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.schedulePump();
  }

  /** Starts work on the next turn of the event loop, so adds made in one burst coalesce. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Queues the key after `delayMs`; an earlier pending delayed add wins over a later one. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref?.();
    this.timers.set(key, { at, timer });
  }

  /** Queues the key after its next backoff delay and returns that delay in milliseconds. */
  addRateLimited(key: string): number {
    const delay = this.nextBackoff(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** The delay the next failure of `key` will wait, counting this failure. */
  nextBackoff(key: string): number {
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    const exponential = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (failures - 1));
    const backoff = Math.round(exponential * (1 + this.options.jitter * this.options.random()));
    return Math.max(backoff, this.reserveToken());
  }

  /** Takes a token of the retry bucket (going into debt) and returns how long until it is covered. */
  private reserveToken(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.options.ratePerSecond);
  }

  /** Failures recorded for the key since the last `forget`. */
  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Resets the key's backoff (call after it was processed successfully). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Keys waiting or being processed (delayed keys not included). */
  get depth(): number {
    return this.queue.length - this.head + this.processing.size;
  }

  /** Resolves when nothing is queued or processing (delayed keys may still be pending). */
  async idle(): Promise<void> {
    if (this.depth === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work; resolves when the keys being processed are done. Delayed adds are dropped. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue = [];
    this.head = 0;
    this.queued.clear();
    while (this.processing.size > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(
      this.options.burst,
      this.tokens + ((now - this.lastRefill) * this.options.ratePerSecond) / 1000,
    );
    this.lastRefill = now;
  }

  private pump(): void {
    while (!this.stopped && this.processing.size < this.options.concurrency && this.head < this.queue.length) {
      const key = this.queue[this.head++] as string;
      this.queued.delete(key);
      this.processing.add(key);
      void this.run(key);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.depth === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.handler(key);
    } catch {
      // The handler decides about retries (addRateLimited); an escaped error is retried with backoff.
      if (!this.stopped) this.addRateLimited(key);
    } finally {
      this.processing.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
    }
  }
}
