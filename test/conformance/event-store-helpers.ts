/** Helpers for the event store suites: reading a subscription with deadlines, sleeping. */
import type { EventSubscription, StoredEvent } from "@persys/controlplane";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const TIMEOUT = Symbol("timeout");

/**
 * Reads a subscription with deadlines without losing events: a `next()` that timed out stays pending
 * and is the one awaited by the following call.
 */
export class SubscriptionReader {
  private readonly iterator: AsyncIterator<StoredEvent>;
  private pending: Promise<IteratorResult<StoredEvent>> | undefined;

  constructor(readonly subscription: EventSubscription) {
    this.iterator = subscription[Symbol.asyncIterator]();
  }

  /** The next event, `undefined` when none came within `timeoutMs`; throws when the feed ended. */
  async next(timeoutMs: number): Promise<StoredEvent | undefined> {
    this.pending ??= this.iterator.next();
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      this.pending,
      new Promise<typeof TIMEOUT>((resolve) => {
        timer = setTimeout(() => resolve(TIMEOUT), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (result === TIMEOUT) return undefined;
    this.pending = undefined;
    if (result.done) throw new Error("the subscription ended");
    return result.value;
  }

  /** Exactly `count` events, failing when they do not all come within `timeoutMs`. */
  async take(count: number, timeoutMs = 10_000): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    const deadline = Date.now() + timeoutMs;
    while (events.length < count) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (!event) throw new Error(`received ${events.length} of ${count} events within ${timeoutMs} ms`);
      events.push(event);
    }
    return events;
  }

  /** Resolves `true` when the feed ends (iteration done) within `timeoutMs`. */
  async ends(timeoutMs: number): Promise<boolean> {
    this.pending ??= this.iterator.next();
    const result = await Promise.race([this.pending, sleep(timeoutMs).then((): typeof TIMEOUT => TIMEOUT)]);
    return result !== TIMEOUT && result.done === true;
  }

  close(): Promise<void> {
    return this.subscription.close();
  }
}

/** The values of one field of each event, e.g. `seq`. */
export function fieldOf(events: readonly StoredEvent[], name: string): Array<string | undefined> {
  return events.map((event) => event.fields[name]);
}
