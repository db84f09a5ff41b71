import { api, errorRegistry, isErrorCode, PersysError } from "@persys/schema";
import { cancelledError } from "../client/retry-policy.js";
import { enumInput, type WorkloadStateName } from "../enums/enum-inputs.js";
import { enumLabel } from "../enums/friendly-enums.js";
import { WaitError } from "../errors/wait-error.js";
import type { WatchWorkloadsOptions, WorkloadWatchEvent } from "./workload-watch.js";

/** What {@link WorkloadsApi.waitFor} waits for: a workload state, `deleted`, or a predicate. */
export type WaitTarget = WorkloadStateName | api.WorkloadState | "deleted" | ((workload: api.Workload) => boolean);

/** Options of {@link WorkloadsApi.waitFor}. */
export interface WaitOptions {
  /** Give up after this long (rejecting with a {@link WaitError}, outcome `timeout`). Default 5 minutes. */
  readonly timeoutMs?: number | undefined;
  /** Aborting rejects with a PersysError CANCELLED. */
  readonly signal?: AbortSignal | undefined;
  /** Called with every version of the workload seen, the first included (for progress output). */
  readonly onProgress?: ((workload: api.Workload) => void) | undefined;
  /**
   * Reject as soon as a replica fails, even when Persys would retry it (reason `retryable`).
   * Default false: only failures Persys does not retry by itself end the wait early.
   */
  readonly failFast?: boolean | undefined;
}

/** How often waitFor re-reads the workload until its watch delivered a first event. */
const RECHECK_MS = 1_000;

/** The default {@link WaitOptions.timeoutMs}. */
export const DEFAULT_WAIT_TIMEOUT_MS = 300_000;

/** What waitFor needs from the workloads API. Internal. */
export interface WaitDeps {
  find(id: string, signal: AbortSignal): Promise<api.Workload | undefined>;
  watch(options: WatchWorkloadsOptions): AsyncIterable<WorkloadWatchEvent>;
  explain(id: string, signal: AbortSignal): Promise<api.ExplainWorkloadResponse>;
}

/** A readable name for a target, for messages. */
function targetName(target: WaitTarget): string {
  if (typeof target === "function") return "the expected condition";
  if (typeof target === "number") return enumLabel(api.WorkloadState, target);
  return target;
}

/**
 * The replica failure that ends a wait early: a FAILED replica whose reason Persys does not retry
 * (or any failed replica with `failFast`). Undefined when waiting for `failed` or `stopped`.
 */
export function terminalFailure(
  workload: api.Workload,
  failFast: boolean,
): { replica: api.ReplicaStatus; code: PersysError["code"] } | undefined {
  for (const replica of workload.status?.replicas ?? []) {
    if (replica.state !== api.ReplicaState.REPLICA_STATE_FAILED) continue;
    if (!failFast && replica.reason?.retryable !== false) continue;
    const name = api.ErrorCode[replica.reason?.code ?? 0];
    return { replica, code: isErrorCode(name) ? name : "RUNTIME_ERROR" };
  }
  return undefined;
}

/** One line about a workload's status: `state pending, 0/2 ready; replica 0 pending: <reason>`. */
export function describeProgress(workload: api.Workload | undefined): string {
  if (!workload?.status) return "no status yet";
  const s = workload.status;
  const parts = [`state ${enumLabel(api.WorkloadState, s.state)}, ${s.readyReplicas}/${workload.replicas ?? 1} ready`];
  for (const r of s.replicas) {
    if (r.state === api.ReplicaState.REPLICA_STATE_RUNNING) continue;
    const why = r.reason?.message || r.placement?.message;
    parts.push(`replica ${r.index} ${enumLabel(api.ReplicaState, r.state)}${why ? `: ${why}` : ""}`);
  }
  return parts.join("; ");
}

/**
 * Waits until the workload reaches `target`, following its watch (so it survives reconnects).
 * Resolves with the workload (or `undefined` for `deleted`). Rejects with a {@link WaitError} on
 * timeout, on a terminal replica failure, or when the workload disappears; with NOT_FOUND when it
 * does not exist at the start (unless waiting for `deleted`); with CANCELLED when `signal` aborts.
 */
export async function waitForWorkload(
  deps: WaitDeps,
  id: string,
  target: WaitTarget,
  options: WaitOptions = {},
): Promise<api.Workload | undefined> {
  const wanted =
    typeof target === "string" && target !== "deleted" ? enumInput(api.WorkloadState, target, "state") : target;
  const reached = (w: api.Workload) =>
    typeof wanted === "function" ? wanted(w) : wanted !== "deleted" && w.status?.state === wanted;
  const name = targetName(target);
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        stop.abort();
      }, timeoutMs)
    : undefined;
  const waitsForFailure =
    wanted === api.WorkloadState.WORKLOAD_STATE_FAILED || wanted === api.WorkloadState.WORKLOAD_STATE_STOPPED;
  let last: api.Workload | undefined;

  const explainQuietly = async () => {
    try {
      return await deps.explain(id, AbortSignal.timeout(5_000));
    } catch {
      return undefined;
    }
  };
  const check = async (workload: api.Workload): Promise<boolean> => {
    last = workload;
    options.onProgress?.(workload);
    if (reached(workload)) return true;
    const failure =
      waitsForFailure || wanted === "deleted" ? undefined : terminalFailure(workload, options.failFast ?? false);
    if (failure) {
      const why = failure.replica.reason?.message || errorRegistry[failure.code].summary;
      throw new WaitError(
        "failed",
        failure.code,
        `workload ${id} will not become ${name}: replica ${failure.replica.index} failed: ${why}`,
        {
          target: name,
          workload,
          explanation: await explainQuietly(),
          retryable: false,
        },
      );
    }
    return false;
  };

  try {
    const initial = await deps.find(id, stop.signal);
    if (!initial) {
      if (wanted === "deleted") return undefined;
      throw new PersysError("NOT_FOUND", `workload ${id} not found`);
    }
    if (await check(initial)) return initial;
    const deleted = () => {
      if (wanted === "deleted") return undefined;
      throw new WaitError("deleted", "NOT_FOUND", `workload ${id} was deleted while waiting for it to be ${name}`, {
        target: name,
        workload: last,
      });
    };
    // The watch opens with the workload's current state; one deleted between the read above and
    // that first event would never show in it, so until the first event arrives, look again.
    const watchStop = new AbortController();
    const endWatch = () => watchStop.abort();
    stop.signal.addEventListener("abort", endWatch, { once: true });
    let gone = false;
    let firstEvent = false;
    const recheck = setInterval(() => {
      if (firstEvent) return clearInterval(recheck);
      deps.find(id, stop.signal).then(
        (found) => {
          if (!found && !firstEvent) {
            gone = true;
            watchStop.abort();
          }
        },
        () => undefined, // the watch reports connection trouble itself
      );
    }, RECHECK_MS);
    try {
      for await (const event of deps.watch({ workloadId: id, signal: watchStop.signal })) {
        firstEvent = true;
        if (event.type === "deleted") return deleted();
        if (await check(event.workload)) return event.workload;
      }
    } catch (error) {
      if (!gone || stop.signal.aborted) throw error;
    } finally {
      clearInterval(recheck);
      stop.signal.removeEventListener("abort", endWatch);
    }
    if (gone && !stop.signal.aborted) return deleted();
    if (stop.signal.aborted) throw await stopErrorValue();
    throw new PersysError("INTERNAL", "the workload watch ended unexpectedly");
  } catch (thrown) {
    if (thrown instanceof WaitError || !stop.signal.aborted) throw thrown;
    throw await stopErrorValue();
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }

  async function stopErrorValue(): Promise<PersysError> {
    if (!timedOut) return cancelledError(options.signal ?? stop.signal);
    const explanation = await explainQuietly();
    const seconds = Math.round(timeoutMs / 100) / 10;
    return new WaitError(
      "timeout",
      "DEADLINE_EXCEEDED",
      `workload ${id} is not ${name} after ${seconds}s: ${describeProgress(last)}`,
      {
        target: name,
        workload: last,
        explanation,
      },
    );
  }
}
