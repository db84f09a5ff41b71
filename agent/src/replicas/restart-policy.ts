import type { RestartMode } from "./desired-replica.js";

/** Docker's restart backoff: 100 ms doubling to 1 min, reset after 10 s of running. */
export const RESTART_BACKOFF = { initialMs: 100, maxMs: 60_000, resetAfterMs: 10_000 } as const;

export interface RestartInput {
  readonly mode: RestartMode;
  /** on-failure only; 0: no limit. */
  readonly maxRetries: number;
  readonly exitCode: number;
  readonly oomKilled: boolean;
  /** Restarts so far at this container (Docker's and the agent's). */
  readonly restarts: number;
  /** How long the container ran before it stopped. */
  readonly ranForMs: number;
  /** The delay used for the previous restart (0: none yet). */
  readonly previousDelayMs: number;
}

export interface RestartDecision {
  readonly restart: boolean;
  /** Wait this long before starting it again. */
  readonly delayMs: number;
}

/**
 * Whether the agent restarts a container that stopped without Persys asking — one Docker itself
 * will not restart because it counts as stopped by hand (`docker kill`, `docker stop`). Follows the
 * replica's restart policy as Docker would: `always` and `unless-stopped` restart, `on-failure`
 * restarts on a non-zero exit (or an OOM kill) until `maxRetries`, `no` never; with Docker's
 * backoff. Pure.
 */
export function restartDecision(input: RestartInput): RestartDecision {
  const failed = input.exitCode !== 0 || input.oomKilled;
  const restart =
    input.mode === "always" ||
    input.mode === "unless-stopped" ||
    (input.mode === "on-failure" && failed && (input.maxRetries === 0 || input.restarts < input.maxRetries));
  if (!restart) return { restart: false, delayMs: 0 };
  const reset = input.ranForMs >= RESTART_BACKOFF.resetAfterMs || input.previousDelayMs === 0;
  const delayMs = reset ? RESTART_BACKOFF.initialMs : Math.min(input.previousDelayMs * 2, RESTART_BACKOFF.maxMs);
  return { restart: true, delayMs };
}
