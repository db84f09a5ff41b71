import type { PersysError } from "@persys/schema";
import { toPersysError } from "./call-runner.js";
import { backoffDelay, cancelledError, type RetryPolicy, sleep } from "./retry-policy.js";

/** What a stream tells its `onReconnect` callback before it reconnects. */
export interface ReconnectInfo {
  /** Reconnect attempts since the last item was received (1 for the first). */
  readonly attempt: number;
  /** Why the stream broke; `undefined` when the server ended it cleanly (e.g. on shutdown). */
  readonly error: PersysError | undefined;
  /** How long the stream waits before reconnecting. */
  readonly delayMs: number;
}

/** Options of the resumable streams ({@link WorkloadsApi.watch}, {@link EventsApi.watch}). */
export interface StreamOptions {
  /** Aborting ends the iteration (the loop ends; no error is thrown). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Reconnect after a dropped connection or a server restart, resuming after the last item so that
   * nothing is lost or repeated. Default true; false ends the iteration with the error instead.
   */
  readonly reconnect?: boolean | undefined;
  /** Called before each reconnect (for logging and progress output). */
  readonly onReconnect?: ((info: ReconnectInfo) => void) | undefined;
}

/** Backoff between reconnects: 250 ms doubling to 5 s, with jitter. */
export const RECONNECT_BACKOFF: RetryPolicy = Object.freeze({
  maxAttempts: Number.POSITIVE_INFINITY,
  initialBackoffMs: 250,
  maxBackoffMs: 5_000,
});

/**
 * Codes after which a stream is opened again: the connection or the server went away (UNAVAILABLE,
 * a server-side CANCELLED or INTERNAL from a reset stream), or the server says it is worth retrying.
 */
export function isResumableStreamError(error: PersysError): boolean {
  if (error.retryable) return true;
  return error.code === "UNAVAILABLE" || error.code === "CANCELLED" || error.code === "INTERNAL";
}

/**
 * Runs `session` again and again, each time resuming from the cursor the session keeps: after an
 * error for which `resumable` holds (default {@link isResumableStreamError}) and after a clean end,
 * it waits with backoff and opens a new session. `session` receives the error that ended the
 * previous one (or `undefined`), e.g. to re-list after COMPACTED. Ends quietly when `signal` aborts;
 * other errors are thrown. With `reconnect: false` a single session runs.
 */
export async function* resumable<T>(
  session: (previousError: PersysError | undefined) => AsyncIterable<T>,
  options: StreamOptions & { resumable?: (error: PersysError) => boolean },
): AsyncGenerator<T, void, undefined> {
  const { signal } = options;
  const reconnect = options.reconnect ?? true;
  const canResume = options.resumable ?? isResumableStreamError;
  let failures = 0;
  let previous: PersysError | undefined;
  for (;;) {
    if (signal?.aborted) return;
    let error: PersysError | undefined;
    try {
      for await (const item of session(previous)) {
        failures = 0;
        yield item;
      }
    } catch (thrown) {
      if (signal?.aborted) return;
      error = toPersysError(thrown);
      if (!reconnect || !canResume(error)) throw error;
    }
    if (signal?.aborted) return;
    if (!reconnect) {
      if (error) throw error;
      return;
    }
    previous = error;
    const delayMs = backoffDelay(RECONNECT_BACKOFF, failures++);
    options.onReconnect?.({ attempt: failures, error, delayMs });
    try {
      await sleep(delayMs, signal);
    } catch {
      return;
    }
  }
}

/** Throws CANCELLED when `signal` has aborted (for one-shot code paths around a stream). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledError(signal);
}
