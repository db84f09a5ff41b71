import { type Compare, MAX_TXN_OPS, type StateStore, type TxnOp } from "./state-store.js";

export interface BatchItem {
  /** Conditions for this item alone (e.g. "assignment key absent"). */
  readonly compare: readonly Compare[];
  readonly ops: readonly TxnOp[];
}

export interface BatchOutcome {
  readonly succeeded: boolean;
  readonly revision: number;
}

/**
 * Bytes of keys and values one merged transaction may carry: etcd refuses requests over 1.5 MiB
 * (`--max-request-bytes`), so merged ones stay well under it.
 */
export const MAX_TXN_BYTES = 1024 * 1024;

const bytesOf = (item: BatchItem) =>
  item.ops.reduce((n, op) => n + op.key.length + (op.type === "put" ? op.value.byteLength : 0), 0);

interface Queued extends BatchItem {
  readonly bytes: number;
  resolve(outcome: BatchOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items submitted within `lingerMs` of each other (up to the store's transaction limits
 * and MAX_TXN_BYTES) are written in ONE transaction guarded by the fence (the leader's, for leader
 * writes; none for API writes) plus every item's
 * own compares, so a burst of placements costs one round trip and one fsync instead of hundreds.
 * When a merged transaction fails a compare, each item is retried alone so only the item whose own
 * compare failed (or all, when the fence failed) reports `succeeded: false`.
 */
export class TxnBatcher {
  private queue: Queued[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private queuedBytes = 0;
  /** Ops (or compares, whichever is more) of the queued items, counted as they are queued. */
  private queuedOps = 0;

  constructor(
    private readonly store: StateStore,
    private readonly fence: () => Compare | undefined,
    private readonly options: { lingerMs?: number; maxConcurrent?: number } = {},
  ) {}

  submit(item: BatchItem): Promise<BatchOutcome> {
    const bytes = bytesOf(item);
    if (item.ops.length + item.compare.length + 1 > MAX_TXN_OPS || bytes > MAX_TXN_BYTES / 2) {
      return this.write([item]).then((r) => r[0]!);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ ...item, bytes, resolve, reject });
      this.queuedBytes += bytes;
      this.queuedOps += Math.max(item.ops.length, item.compare.length);
      if (this.queuedOps >= MAX_TXN_OPS || this.queuedBytes >= MAX_TXN_BYTES) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.lingerMs ?? 2);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if ((this.options.maxConcurrent ?? 4) <= this.inFlight) {
      this.timer = setTimeout(() => this.flush(), 1);
      return;
    }
    const queue = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedOps = 0;
    let at = 0;
    while (at < queue.length) {
      const batch: Queued[] = [];
      let ops = 0;
      let compares = 1;
      let bytes = 0;
      while (at < queue.length) {
        const next = queue[at]!;
        const full =
          ops + next.ops.length > MAX_TXN_OPS ||
          compares + next.compare.length > MAX_TXN_OPS ||
          bytes + next.bytes > MAX_TXN_BYTES;
        if (batch.length > 0 && full) break;
        batch.push(next);
        at++;
        ops += next.ops.length;
        compares += next.compare.length;
        bytes += next.bytes;
      }
      this.inFlight++;
      this.write(batch)
        .then((outcomes) => {
          for (const [i, q] of batch.entries()) q.resolve(outcomes[i]!);
        })
        .catch((error) => {
          for (const q of batch) q.reject(error);
        })
        .finally(() => {
          this.inFlight--;
        });
    }
  }

  private async write(batch: readonly BatchItem[]): Promise<BatchOutcome[]> {
    const fence = this.fence();
    const guard = fence ? [fence] : [];
    if (batch.length === 1) {
      const only = await this.store.txn({ compare: [...guard, ...batch[0]!.compare], success: batch[0]!.ops });
      return [{ succeeded: only.succeeded, revision: only.revision }];
    }
    try {
      const merged = await this.store.txn({
        compare: [...guard, ...batch.flatMap((b) => b.compare)],
        success: batch.flatMap((b) => b.ops),
      });
      if (merged.succeeded) return batch.map(() => ({ succeeded: true, revision: merged.revision }));
    } catch {
      // e.g. two items touching one key: write them one by one below.
    }
    const outcomes: BatchOutcome[] = [];
    for (const item of batch) {
      const alone = await this.store.txn({ compare: [...guard, ...item.compare], success: item.ops });
      outcomes.push({ succeeded: alone.succeeded, revision: alone.revision });
    }
    return outcomes;
  }
}
