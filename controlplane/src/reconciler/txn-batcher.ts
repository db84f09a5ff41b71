import { type Compare, MAX_TXN_OPS, type StateStore, type TxnOp } from "../state/state-store.js";

export interface BatchItem {
  /** Conditions for this item alone (e.g. "assignment key absent"). */
  readonly compare: readonly Compare[];
  readonly ops: readonly TxnOp[];
}

export interface BatchOutcome {
  readonly succeeded: boolean;
  readonly revision: number;
}

interface Queued extends BatchItem {
  resolve(outcome: BatchOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit for leader writes: items submitted within `lingerMs` of each other (up to the store's
 * transaction limits) are written in ONE transaction guarded by the leader's fence plus every item's
 * own compares, so a burst of placements costs one round trip and one fsync instead of hundreds.
 * When a merged transaction fails a compare, each item is retried alone so only the item whose own
 * compare failed (or all, when the fence failed) reports `succeeded: false`.
 */
export class TxnBatcher {
  private queue: Queued[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;

  constructor(
    private readonly store: StateStore,
    private readonly fence: () => Compare | undefined,
    private readonly options: { lingerMs?: number; maxConcurrent?: number } = {},
  ) {}

  submit(item: BatchItem): Promise<BatchOutcome> {
    if (item.ops.length + item.compare.length + 1 > MAX_TXN_OPS) {
      return this.write([item]).then((r) => r[0]!);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ ...item, resolve, reject });
      if (this.size() >= MAX_TXN_OPS) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.lingerMs ?? 2);
    });
  }

  private size(): number {
    return this.queue.reduce((n, q) => n + Math.max(q.ops.length, q.compare.length), 0);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if ((this.options.maxConcurrent ?? 4) <= this.inFlight) {
      this.timer = setTimeout(() => this.flush(), 1);
      return;
    }
    while (this.queue.length > 0) {
      const batch: Queued[] = [];
      let ops = 0;
      let compares = 1;
      while (this.queue.length > 0) {
        const next = this.queue[0]!;
        if (batch.length > 0 && (ops + next.ops.length > MAX_TXN_OPS || compares + next.compare.length > MAX_TXN_OPS))
          break;
        batch.push(this.queue.shift()!);
        ops += next.ops.length;
        compares += next.compare.length;
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
