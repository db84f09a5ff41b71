import { PersysError } from "@persys/schema";

/** Defaults of the webhook action (`WebhookAction` zeros). */
export const WEBHOOK_DEFAULTS = { maxAttempts: 4, timeoutSeconds: 10, baseDelayMs: 500, maxDelayMs: 8000 } as const;

/** One failed attempt that will be retried. */
export interface AttemptReport {
  /** 1-based. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** e.g. "HTTP 503", "connection refused (ECONNREFUSED)", "timed out after 10 s". */
  readonly failure: string;
  /** How long until the next attempt. */
  readonly retryInMs: number;
}

export interface WebhookDeliveryOptions {
  readonly maxAttempts: number;
  /** Per attempt. */
  readonly timeoutMs: number;
  /** Aborts the wait between attempts and the attempt in flight (the engine stopping). */
  readonly signal?: AbortSignal;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** 0..1; `Math.random` by default (tests pin it). */
  readonly random?: () => number;
  readonly onRetry?: (report: AttemptReport) => Promise<void>;
}

/** 5xx, 408 and 429 are worth another try; any other status is the receiver's final answer. */
const retryableStatus = (status: number) => status >= 500 || status === 408 || status === 429;

/**
 * The wait before attempt `attempt + 1`: exponential (base × 2^(attempt−1), capped) with equal
 * jitter — half fixed, half random — so retries spread out but never come back early.
 */
export function backoffDelay(attempt: number, base: number, max: number, random: () => number): number {
  const ceiling = Math.min(max, base * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError") return `timed out after ${timeoutMs / 1000} s`;
  const cause = e?.cause;
  if (cause?.code) return `${cause.message ?? "connection failed"} (${cause.code})`;
  return e?.message ?? String(error);
}

/**
 * POSTs `body` as JSON to `url`, retrying 5xx (and 408/429) answers and connection errors or
 * timeouts with exponential backoff and jitter, at most `maxAttempts` attempts in all, each with
 * its own timeout. A 4xx answer is final. Returns a one-line result for the audit trail.
 *
 * @throws PersysError INVALID_ARGUMENT for a 4xx answer (not retried), UNAVAILABLE when every
 *   attempt failed (the message names the last failure), CANCELLED when `signal` aborts.
 */
export async function postWebhook(url: string, body: unknown, o: WebhookDeliveryOptions): Promise<string> {
  const base = o.baseDelayMs ?? WEBHOOK_DEFAULTS.baseDelayMs;
  const max = o.maxDelayMs ?? WEBHOOK_DEFAULTS.maxDelayMs;
  const random = o.random ?? Math.random;
  const payload = JSON.stringify(body);
  let failure = "";
  for (let attempt = 1; attempt <= o.maxAttempts; attempt++) {
    const timeout = AbortSignal.timeout(o.timeoutMs);
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: payload,
        signal: o.signal ? AbortSignal.any([timeout, o.signal]) : timeout,
      });
      await response.arrayBuffer().catch(() => undefined);
      const on = attempt > 1 ? ` on attempt ${attempt} of ${o.maxAttempts}` : "";
      if (response.ok) return `webhook answered HTTP ${response.status}${on}`;
      if (!retryableStatus(response.status)) {
        throw new PersysError("INVALID_ARGUMENT", `webhook ${url} answered HTTP ${response.status}${on} (not retried)`);
      }
      failure = `HTTP ${response.status}`;
    } catch (error) {
      if (error instanceof PersysError) throw error;
      if (o.signal?.aborted) throw new PersysError("CANCELLED", `webhook ${url}: stopped before it answered`);
      failure = describe(error, o.timeoutMs);
    }
    if (attempt === o.maxAttempts) break;
    const retryInMs = backoffDelay(attempt, base, max, random);
    await o.onRetry?.({ attempt, maxAttempts: o.maxAttempts, failure, retryInMs });
    await sleep(retryInMs, o.signal);
    if (o.signal?.aborted) throw new PersysError("CANCELLED", `webhook ${url}: stopped between attempts`);
  }
  throw new PersysError("UNAVAILABLE", `webhook ${url} failed ${o.maxAttempts} attempt(s); last: ${failure}`, {
    retryable: true,
  });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
