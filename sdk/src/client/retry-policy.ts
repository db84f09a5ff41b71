import { PersysError } from "@persys/schema";

/** How failed calls are retried. Only errors the server (or the registry) marks `retryable` are retried. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 4; 1 disables retries. */
  readonly maxAttempts?: number;
  /** Delay before the first retry. Default 200 ms; each retry doubles it (with jitter). */
  readonly initialBackoffMs?: number;
  /** Upper bound of one delay. Default 3 s. */
  readonly maxBackoffMs?: number;
}

/** {@link RetryOptions} with every field set. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** The defaults of {@link RetryOptions}. */
export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ maxAttempts: 4, initialBackoffMs: 200, maxBackoffMs: 3_000 });

/** The policy for `options` (`false` disables retries). */
export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...DEFAULT_RETRY, maxAttempts: 1 };
  return {
    maxAttempts: Math.max(1, Math.floor(options?.maxAttempts ?? DEFAULT_RETRY.maxAttempts)),
    initialBackoffMs: Math.max(0, options?.initialBackoffMs ?? DEFAULT_RETRY.initialBackoffMs),
    maxBackoffMs: Math.max(0, options?.maxBackoffMs ?? DEFAULT_RETRY.maxBackoffMs),
  };
}

/**
 * Delay before retry number `retry` (0 for the first): exponential with "equal jitter" — half of
 * the exponential step fixed, half random — capped by `maxBackoffMs`.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const step = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** retry);
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * Whether a failed call may be sent again unchanged: the error is `retryable` (UNAVAILABLE,
 * STORAGE_ERROR, CONFLICT, ...), never for input errors (INVALID_SPEC, INVALID_ARGUMENT, NOT_FOUND,
 * ...). `CONFLICT` is not retried for a request with an expected revision: it would fail the same way.
 * `DEADLINE_EXCEEDED` and `CANCELLED` are the caller's own budget or signal, never retried.
 */
export function isRetryableCallError(error: unknown, options: { conditional?: boolean } = {}): boolean {
  if (!(error instanceof PersysError)) return false;
  if (error.code === "DEADLINE_EXCEEDED" || error.code === "CANCELLED") return false;
  if (error.code === "CONFLICT" && options.conditional) return false;
  return error.retryable;
}

/** Resolves after `ms`, or rejects with the signal's CANCELLED error when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(cancelledError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelledError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The error an aborted operation rejects with: CANCELLED, with the signal's reason as the cause. */
export function cancelledError(signal: AbortSignal): PersysError {
  const reason: unknown = signal.reason;
  const text = reason instanceof Error && reason.message ? `: ${reason.message}` : "";
  return new PersysError("CANCELLED", `the operation was cancelled${text}`, { cause: reason });
}
