import { PersysError } from "@persys/schema";
import type { LeaseGrant, LeaseId, LeaseKeepAlive } from "./state-store.js";

/** Before the first renewal succeeds the TTL is unknown; the shortest TTL any store grants is assumed. */
const UNKNOWN_TTL_SECONDS = 1;

export interface KeepAliveLoopOptions {
  readonly lease: LeaseId;
  /** One renewal (the store's `keepAliveOnce`). */
  readonly renew: (lease: LeaseId) => Promise<LeaseGrant>;
  /** Delay before retrying a renewal that failed with a retryable error. */
  readonly retryDelayMs?: number;
  /** Called once when the loop ends, however it ends. */
  readonly onEnd?: () => void;
}

/** A keep-alive loop the owning store can also end (on close). */
export interface KeepAliveLoop extends LeaseKeepAlive {
  /** Ends the loop with `reason` (as if the lease were lost). */
  abort(reason: PersysError): void;
}

/**
 * Renews a lease every third of its TTL, as etcd's own clients do, using one-shot renewals; shared by
 * both stores. The first renewal is immediate. A renewal failing with a retryable error is retried every
 * `retryDelayMs` until one succeeds or the TTL has passed since the last confirmed renewal; then the lease
 * is reported lost (UNAVAILABLE), because it may have expired on the server. NOT_FOUND (expired or
 * revoked) and other non-retryable errors end the loop at once.
 */
export function startKeepAliveLoop(options: KeepAliveLoopOptions): KeepAliveLoop {
  const retryDelayMs = options.retryDelayMs ?? 200;
  let ttlMs = UNKNOWN_TTL_SECONDS * 1000;
  let confirmedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  let resolveEnded!: (reason: PersysError | undefined) => void;
  const ended = new Promise<PersysError | undefined>((resolve) => {
    resolveEnded = resolve;
  });

  const finish = (reason: PersysError | undefined) => {
    if (done) return;
    done = true;
    if (timer) clearTimeout(timer);
    resolveEnded(reason);
    options.onEnd?.();
  };
  const schedule = (delayMs: number) => {
    if (done) return;
    timer = setTimeout(() => void renewOnce(), delayMs);
  };
  const renewOnce = async () => {
    const attemptAt = performance.now();
    try {
      const grant = await options.renew(options.lease);
      if (done) return;
      ttlMs = grant.ttl * 1000;
      confirmedAt = attemptAt;
      schedule(Math.max(50, ttlMs / 3));
    } catch (error) {
      if (done) return;
      const failure =
        error instanceof PersysError
          ? error
          : new PersysError("INTERNAL", `lease ${options.lease}: keep-alive failed: ${String(error)}`, {
              cause: error,
            });
      if (!failure.retryable) return finish(failure);
      if (performance.now() - confirmedAt >= ttlMs) {
        return finish(
          new PersysError(
            "UNAVAILABLE",
            `lease ${options.lease} could not be renewed within its TTL (${ttlMs / 1000} s) and may have expired: ${failure.message}`,
            { cause: failure, details: [{ path: "lease", reason: "renewal failed for longer than the TTL" }] },
          ),
        );
      }
      schedule(retryDelayMs);
    }
  };

  void renewOnce();
  return {
    ended,
    stop: () => finish(undefined),
    abort: (reason) => finish(reason),
  };
}
