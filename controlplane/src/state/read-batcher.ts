import { type KeyValue, MAX_TXN_OPS, type StateStore } from "./state-store.js";

interface QueuedRead {
  readonly keys: readonly string[];
  resolve(values: (KeyValue | undefined)[]): void;
  reject(error: unknown): void;
}

/**
 * Group read: point reads asked for in the same turn of the event loop (or while `maxInFlight`
 * merged reads are out) go to the store as ONE read-only transaction, up to the store's
 * operations per transaction. Still linearizable for every caller: the merged read is sent after
 * each of its callers asked, so it sees every write acknowledged before any of them did.
 * Concurrent single applies each used to cost a transaction of their own.
 */
export class ReadBatcher {
  private queue: QueuedRead[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly store: StateStore,
    private readonly maxInFlight = 4,
  ) {}

  /** The current values of `keys` (undefined where absent), in order; at most MAX_TXN_OPS keys. */
  read(keys: readonly string[]): Promise<(KeyValue | undefined)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    if (keys.length > MAX_TXN_OPS) throw new RangeError(`at most ${MAX_TXN_OPS} keys per read`);
    return new Promise((resolve, reject) => {
      this.queue.push({ keys, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch: QueuedRead[] = [];
      const slots = new Map<string, number>();
      let at = 0;
      while (at < this.queue.length) {
        const next = this.queue[at]!;
        const added = next.keys.filter((k) => !slots.has(k)).length;
        if (batch.length > 0 && slots.size + added > MAX_TXN_OPS) break;
        for (const key of next.keys) if (!slots.has(key)) slots.set(key, slots.size);
        batch.push(next);
        at++;
      }
      this.queue = this.queue.slice(at);
      this.inFlight++;
      this.store
        .txn({ success: [...slots.keys()].map((key) => ({ type: "get" as const, key })) })
        .then((result) => {
          const values = result.results.map((r) => (r.type === "get" ? r.kv : undefined));
          for (const q of batch) q.resolve(q.keys.map((key) => values[slots.get(key)!]));
        })
        .catch((error: unknown) => {
          for (const q of batch) q.reject(error);
        })
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  }
}
