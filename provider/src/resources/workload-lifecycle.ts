/**
 * Create, read, update and delete of a Persys workload for the engine, on `@persys/sdk`.
 *
 * - create applies with `expectedRevision: ""` (an existing workload of that id is an error that
 *   says to import it), waits until every replica runs, and on failure deletes what it applied and
 *   waits until it is gone, so nothing is left behind; the error carries the scheduler's diagnosis.
 * - read answers `undefined` for a workload that no longer exists (refresh then drops it).
 * - update applies the new spec to the same id (Persys rolls replicas to the new revision in
 *   place) and waits until the new revision runs.
 * - delete starts removal and waits until the workload is gone; NOT_FOUND counts as done.
 */
import { api, describeProgress, enumLabel, type PersysClient, PersysError, WaitError } from "@persys/sdk";
import { apiKinds, resourceKinds, type WorkloadKindName } from "./resource-types.js";
import { type Inputs, inputsOf, toWorkload } from "./workload-inputs.js";
import { outputsOf } from "./workload-outputs.js";

/** Default for create, update and delete when the program sets no custom timeout. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 300_000;

/** How often delete looks whether the workload is gone. */
const DELETE_POLL_MS = 250;

/** The diagnosis lines of a failed wait: each unready replica's reason and placement message. */
export function diagnosisOf(error: unknown): string {
  if (!(error instanceof WaitError)) return "";
  const lines: string[] = [];
  for (const r of error.explanation?.replicas ?? []) {
    const state = enumLabel(api.ReplicaState, r.state);
    if (r.state === api.ReplicaState.REPLICA_STATE_RUNNING) continue;
    const why = [r.reason?.message, r.diagnosis?.message].filter(Boolean).join("; ");
    lines.push(`replica ${r.replicaIndex} ${state}${r.nodeId ? ` on ${r.nodeId}` : ""}${why ? `: ${why}` : ""}`);
  }
  return lines.join("\n");
}

/** An error for the engine: the SDK's message plus the diagnosis, on separate lines. */
function operationError(what: string, id: string, error: unknown, extra = ""): Error {
  const message = error instanceof Error ? error.message : String(error);
  const diagnosis = diagnosisOf(error);
  return new Error(
    [`${what} workload ${id} failed: ${message}`, diagnosis, extra].filter((line) => line !== "").join("\n"),
  );
}

/** The wait target that means "the workload is up as declared". */
function readyTarget(workload: api.Workload, revision: string): (w: api.Workload) => boolean {
  const stopped = workload.desiredState === api.DesiredState.DESIRED_STATE_STOPPED;
  const want = stopped ? api.WorkloadState.WORKLOAD_STATE_STOPPED : api.WorkloadState.WORKLOAD_STATE_RUNNING;
  return (w) => {
    const s = w.status;
    if (!s || s.revision !== revision || s.observedGeneration < s.generation) return false;
    if ((w.replicas ?? 1) === 0) return true;
    return s.state === want;
  };
}

export class WorkloadLifecycle {
  constructor(private readonly client: PersysClient) {}

  /** Applies a new workload and waits until it runs; see the module comment for failure handling. */
  async create(kind: WorkloadKindName, inputs: Inputs, timeoutMs: number): Promise<{ id: string; outs: Inputs }> {
    const workload = toWorkload(kind, inputs);
    const { id } = workload;
    const deadline = Date.now() + timeoutMs;
    let applied: api.Workload;
    try {
      applied = (await this.client.workloads.apply(workload, { expectedRevision: "" })).workload;
    } catch (error) {
      if (error instanceof PersysError && error.code === "ALREADY_EXISTS") {
        throw new Error(
          `workload ${id} already exists in Persys: adopt it with \`pulumi import ${kindToken(kind)} <name> ${id}\`, or choose another name`,
        );
      }
      throw operationError("create", id, error);
    }
    try {
      const ready = await this.client.workloads.waitFor(id, readyTarget(workload, applied.status?.revision ?? ""), {
        timeoutMs: Math.max(1, deadline - Date.now()),
      });
      return { id, outs: outputsOf(inputsOf(ready), await this.full(id, ready)) };
    } catch (error) {
      const cleanup = await this.remove(id, 60_000).then(
        () => `nothing was left behind: workload ${id} was deleted again`,
        (e: unknown) => `cleanup failed, delete workload ${id} by hand: ${(e as Error).message}`,
      );
      throw operationError("create", id, error, cleanup);
    }
  }

  /** The workload's inputs and outputs, or `undefined` when it does not exist (or is another kind). */
  async read(kind: WorkloadKindName, id: string): Promise<{ inputs: Inputs; outs: Inputs } | undefined> {
    const workload = await this.client.workloads.find(id);
    if (!workload || workload.kind !== apiKinds[kind]) return undefined;
    if (workload.status?.state === api.WorkloadState.WORKLOAD_STATE_DELETING) return undefined;
    const inputs = inputsOf(workload);
    return { inputs, outs: outputsOf(inputs, workload) };
  }

  /** Applies the new spec in place and waits until the new revision runs. */
  async update(kind: WorkloadKindName, inputs: Inputs, timeoutMs: number): Promise<Inputs> {
    const workload = toWorkload(kind, inputs);
    try {
      const { workload: applied } = await this.client.workloads.apply(workload);
      const ready = await this.client.workloads.waitFor(
        workload.id,
        readyTarget(workload, applied.status?.revision ?? ""),
        { timeoutMs },
      );
      return outputsOf(inputsOf(ready), await this.full(workload.id, ready));
    } catch (error) {
      throw operationError("update", workload.id, error);
    }
  }

  /** Deletes the workload and waits until it is gone. Already gone: done. */
  async delete(id: string, timeoutMs: number): Promise<void> {
    try {
      await this.remove(id, timeoutMs);
    } catch (error) {
      throw operationError("delete", id, error);
    }
  }

  /**
   * Deletes and polls until the workload is gone. Polling, not `waitFor(id, "deleted")`: that
   * reads the workload and then opens a watch from "now", so a deletion that completes between
   * the two is never seen and the wait runs into its timeout.
   */
  private async remove(id: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = await this.client.workloads.delete(id, { allowMissing: true });
    while (last) {
      if (Date.now() > deadline) {
        throw new PersysError(
          "DEADLINE_EXCEEDED",
          `workload ${id} is not deleted after ${Math.round(timeoutMs / 1000)}s: ${describeProgress(last)}`,
          { retryable: true },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, DELETE_POLL_MS));
      last = await this.client.workloads.find(id, { view: "basic" });
    }
  }

  /** The workload with its full status (endpoints, placement messages); `fallback` if it vanished. */
  private async full(id: string, fallback: api.Workload): Promise<api.Workload> {
    return (await this.client.workloads.find(id)) ?? fallback;
  }
}

function kindToken(kind: WorkloadKindName): string {
  return Object.entries(resourceKinds).find(([, k]) => k === kind)?.[0] ?? kind;
}
