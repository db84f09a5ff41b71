import { PersysError } from "@persys/schema";
import { hasPrefix } from "../key-range.js";
import type { Revision, Watch, WatchBatch, WatchEvent, WatchOptions } from "../state-store.js";

/** Catch-up batches hold at most this many events (whole revisions only). */
const MAX_CATCH_UP_BATCH = 1000;

/** A queued delivery: a batch, or only progress (a revision with nothing for this prefix). */
type Delivery = { readonly batch?: WatchBatch; readonly revision: Revision };

/**
 * One watcher of the embedded store. Deliveries are queued in revision order and handed to `onEvents`
 * asynchronously (never inside the caller's write), so a listener that writes cannot reorder events.
 */
class EmbeddedWatch implements Watch {
  private delivered: Revision;
  private readonly queue: Delivery[] = [];
  private scheduled = false;
  private done = false;
  private resolveEnded!: (reason: PersysError | undefined) => void;
  readonly ended = new Promise<PersysError | undefined>((resolve) => {
    this.resolveEnded = resolve;
  });

  constructor(
    readonly prefix: Buffer,
    afterRevision: Revision,
    private readonly options: WatchOptions,
    private readonly detach: (watch: EmbeddedWatch) => void,
  ) {
    this.delivered = afterRevision;
  }

  get lastRevision(): Revision {
    return this.delivered;
  }

  /** Queues the events of one committed revision (already filtered to this prefix; may be empty). */
  enqueue(revision: Revision, events: readonly WatchEvent[]): void {
    if (this.done) return;
    const last = this.queue.at(-1);
    if (events.length === 0 && last && !last.batch) {
      this.queue[this.queue.length - 1] = { revision };
    } else {
      this.queue.push(events.length > 0 ? { batch: { events, revision }, revision } : { revision });
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  async cancel(): Promise<void> {
    this.end(undefined);
  }

  end(reason: PersysError | undefined): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    this.detach(this);
    if (reason) this.options.onError?.(reason);
    this.resolveEnded(reason);
  }

  private drain(): void {
    this.scheduled = false;
    while (!this.done && this.queue.length > 0) {
      const next = this.queue.shift()!;
      if (next.batch) {
        try {
          this.options.onEvents(next.batch);
        } catch (error) {
          this.end(new PersysError("INTERNAL", `watch listener threw: ${String(error)}`, { cause: error }));
          return;
        }
      }
      this.delivered = Math.max(this.delivered, next.revision);
    }
  }
}

/** The embedded store's watchers: catch-up from history on registration, then every commit in order. */
export class WatchHub {
  private readonly watchers = new Set<EmbeddedWatch>();

  /**
   * Registers a watcher of `prefix` after `afterRevision`. `history` are the stored events after that
   * revision up to `current` (read in the same synchronous step, so nothing is missed or repeated).
   */
  add(
    prefix: Buffer,
    afterRevision: Revision,
    current: Revision,
    history: readonly WatchEvent[],
    options: WatchOptions,
  ): Watch {
    const watch = new EmbeddedWatch(prefix, afterRevision, options, (w) => this.watchers.delete(w));
    for (const batch of groupByRevision(history, MAX_CATCH_UP_BATCH)) watch.enqueue(batch.revision, batch.events);
    if (current > afterRevision) watch.enqueue(current, []);
    this.watchers.add(watch);
    return watch;
  }

  /** Hands the events of a committed revision to every watcher (each gets those of its prefix). */
  publish(revision: Revision, events: readonly WatchEvent[], keys: readonly Buffer[]): void {
    for (const watch of this.watchers) {
      if (revision <= watch.lastRevision) continue;
      watch.enqueue(
        revision,
        events.filter((_, i) => hasPrefix(keys[i]!, watch.prefix)),
      );
    }
  }

  /** Ends every watcher (store closed). */
  closeAll(): void {
    for (const watch of [...this.watchers]) watch.end(undefined);
  }
}

/** Splits revision-ordered events into batches of whole revisions, of about `max` events each. */
export function groupByRevision(events: readonly WatchEvent[], max: number): WatchBatch[] {
  const batches: WatchBatch[] = [];
  let current: WatchEvent[] = [];
  for (const event of events) {
    const last = current.at(-1);
    if (last && last.revision !== event.revision && current.length >= max) {
      batches.push({ events: current, revision: last.revision });
      current = [];
    }
    current.push(event);
  }
  const last = current.at(-1);
  if (last) batches.push({ events: current, revision: last.revision });
  return batches;
}
