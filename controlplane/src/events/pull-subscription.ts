import { compareIdParts, type EventIdParts, parseEventId } from "./event-id.js";
import type { EventSubscription, StoredEvent } from "./event-store.js";

/**
 * Fetches the next events after the cursors, waiting for some when there are none yet. Resolves
 * `[]` to let the loop look at its stop condition (a timeout, or `signal` aborted); must resolve
 * promptly once `signal` aborts. Throws only for failures that retrying cannot fix.
 */
export type FetchAfter = (cursors: ReadonlyMap<string, EventIdParts>, signal: AbortSignal) => Promise<StoredEvent[]>;

/**
 * A pull-driven subscription over `fetch`: it fetches only when the consumer asks for the next event
 * (so a slow consumer is never buffered against), advances one cursor per stream past every event it
 * hands out, and so never delivers an event twice or skips one that the fetch returned.
 * Events of one batch are delivered in id order (streams tie-broken by name).
 */
export function pullSubscription(options: {
  readonly cursors: ReadonlyMap<string, EventIdParts>;
  readonly fetch: FetchAfter;
  readonly signal?: AbortSignal | undefined;
  /** Called once when the subscription ends, for whatever reason. */
  readonly onEnd?: () => void;
}): EventSubscription {
  const cursors = new Map(options.cursors);
  const stop = new AbortController();
  const external = options.signal;
  const onAbort = () => stop.abort();
  if (external?.aborted) stop.abort();
  else external?.addEventListener("abort", onAbort, { once: true });
  let started = false;

  async function* events(): AsyncGenerator<StoredEvent> {
    try {
      while (!stop.signal.aborted) {
        const batch = await options.fetch(cursors, stop.signal);
        batch.sort((a, b) => compareIdParts(idOf(a), idOf(b)) || (a.stream < b.stream ? -1 : 1));
        for (const event of batch) {
          if (stop.signal.aborted) return;
          const cursor = cursors.get(event.stream);
          const id = idOf(event);
          if (!cursor || compareIdParts(id, cursor) <= 0) continue;
          cursors.set(event.stream, id);
          yield event;
        }
      }
    } finally {
      end();
    }
  }

  let ended = false;
  function end() {
    if (ended) return;
    ended = true;
    stop.abort();
    external?.removeEventListener("abort", onAbort);
    options.onEnd?.();
  }

  const generator = events();
  return {
    [Symbol.asyncIterator]() {
      if (started) throw new TypeError("an event subscription can be iterated only once");
      started = true;
      return generator;
    },
    async close() {
      stop.abort();
      // A pending next() settles once fetch sees the abort; return() then finishes the generator.
      await generator.return(undefined);
      end();
    },
  };
}

/** Resolves with the promise's value, or `undefined` as soon as `signal` aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** A store's subscription over `fetch`, kept in `live` until it ends (so closing the store ends it). */
export function trackedSubscription(
  live: Set<EventSubscription>,
  options: Omit<Parameters<typeof pullSubscription>[0], "onEnd">,
): EventSubscription {
  const subscription = pullSubscription({ ...options, onEnd: () => live.delete(subscription) });
  live.add(subscription);
  return subscription;
}

function idOf(event: StoredEvent): EventIdParts {
  const parts = parseEventId(event.id);
  if (!parts) throw new TypeError(`store produced a malformed event id ${event.id}`);
  return parts;
}
