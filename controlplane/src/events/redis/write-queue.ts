import { PersysError } from "@persys/schema";

/** What the queue needs to know about the connection it writes through. */
export interface WriteQueueConnection {
  /** Whether writes can be sent now. */
  connected(): boolean;
  /** True when `error` means "the connection failed, try again later" rather than "Redis refused it". */
  isTransient(error: unknown): boolean;
  /** The error to reject a write with when Redis refused it. */
  refused(error: unknown): PersysError;
  /** Why the store is degraded now (for error messages). */
  outage(): string;
}

interface QueuedWrite {
  readonly send: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly deadline: number;
  settled: boolean;
}

/**
 * An ordered, bounded queue of writes to Redis. Writes are sent in submission order, in batches
 * (one batch in flight at a time, so order holds across reconnects); while the connection is down
 * they wait, at most `maxWrites` of them and each at most `maxWaitMs`. A write that finds the queue
 * full, or waited past its deadline, is rejected with `UNAVAILABLE` (retryable). A write that was
 * in flight when the connection broke is sent again: writes are applied at least once.
 */
export class WriteQueue {
  private readonly queue: QueuedWrite[] = [];
  private sending = false;
  private abandoned: PersysError | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly drained = new Set<() => void>();

  constructor(
    private readonly connection: WriteQueueConnection,
    private readonly limits: { readonly maxWrites: number; readonly maxWaitMs: number; readonly batchSize?: number },
  ) {}

  /** Writes waiting or in flight. */
  get size(): number {
    return this.queue.length;
  }

  /** Queues `send` and resolves with its result once Redis applied it (see the class for failures). */
  submit<T>(send: () => Promise<T>): Promise<T> {
    if (this.abandoned) return Promise.reject(this.abandoned);
    if (this.queue.length >= this.limits.maxWrites) {
      return Promise.reject(
        new PersysError(
          "UNAVAILABLE",
          `event store write buffer is full (${this.limits.maxWrites} writes waiting): ${this.connection.outage()}`,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        send,
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: Date.now() + this.limits.maxWaitMs,
        settled: false,
      });
      this.armSweeper();
      this.pump();
    });
  }

  /** Sends the next batch if connected and none is in flight. Call when the connection is ready. */
  pump(): void {
    if (this.sending || this.abandoned || this.queue.length === 0 || !this.connection.connected()) return;
    const batch = this.queue.slice(0, this.limits.batchSize ?? 256);
    this.sending = true;
    const results = batch.map((write) => {
      try {
        return write.send();
      } catch (error) {
        return Promise.reject(error);
      }
    });
    void Promise.allSettled(results).then((outcomes) => this.settleBatch(batch, outcomes));
  }

  private settleBatch(batch: QueuedWrite[], outcomes: PromiseSettledResult<unknown>[]): void {
    this.sending = false;
    let retry = false;
    const now = Date.now();
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if (write.settled || !outcome) return;
      if (outcome.status === "fulfilled") this.settle(write, () => write.resolve(outcome.value));
      else if (!this.connection.isTransient(outcome.reason))
        this.settle(write, () => write.reject(this.connection.refused(outcome.reason)));
      else if (write.deadline <= now)
        this.settle(write, () =>
          write.reject(
            new PersysError(
              "UNAVAILABLE",
              `event store write was sent but not confirmed within ${this.limits.maxWaitMs} ms (it may have been applied): ${this.connection.outage()}`,
              { cause: outcome.reason },
            ),
          ),
        );
      else retry = true;
    });
    this.compact();
    if (retry) {
      // The connection may still look ready (a Redis LOADING reply, a timeout): try again shortly.
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.pump(), 100);
      this.retryTimer.unref();
    } else this.pump();
  }

  private settle(write: QueuedWrite, action: () => void): void {
    write.settled = true;
    action();
  }

  private compact(): void {
    let kept = 0;
    for (const write of this.queue) if (!write.settled) this.queue[kept++] = write;
    this.queue.length = kept;
    if (kept === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      for (const resolve of [...this.drained]) resolve();
    }
  }

  /** Rejects writes that are not in flight and waited past their deadline. */
  private sweep(): void {
    const now = Date.now();
    const inFlight = this.sending ? Math.min(this.limits.batchSize ?? 256, this.queue.length) : 0;
    let expired = false;
    this.queue.forEach((write, i) => {
      if (i < inFlight || write.settled || write.deadline > now) return;
      expired = true;
      this.settle(write, () =>
        write.reject(
          new PersysError(
            "UNAVAILABLE",
            `event store write waited ${this.limits.maxWaitMs} ms and was not applied: ${this.connection.outage()}`,
          ),
        ),
      );
    });
    // While a batch is in flight, settled writes are removed when it settles.
    if (expired && !this.sending) this.compact();
  }

  private armSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(250, this.limits.maxWaitMs / 4)));
    this.sweeper.unref();
  }

  /** Resolves when the queue is empty, or after `timeoutMs`; reports whether it drained. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.queue.length === 0) return true;
    return new Promise<boolean>((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.drained.delete(onDrained);
        resolve(drained);
      };
      const onDrained = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.drained.add(onDrained);
    });
  }

  /** Rejects every queued write (also those in flight) with `error`; later submits fail with it too. */
  abandon(error: PersysError): void {
    this.abandoned = error;
    clearInterval(this.sweeper);
    clearTimeout(this.retryTimer);
    this.sweeper = undefined;
    for (const write of this.queue) if (!write.settled) this.settle(write, () => write.reject(error));
    this.queue.length = 0;
    for (const resolve of [...this.drained]) resolve();
  }
}
