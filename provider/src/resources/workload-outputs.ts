/**
 * The output properties of a Persys resource: its canonical inputs plus what Persys observed —
 * `revision`, `status`, `placements` (node and reason per replica) and `endpoints`.
 */
import { api, enumLabel } from "@persys/sdk";
import type { Inputs } from "./workload-inputs.js";

/** Output-only property names (everything else in the outputs is an input). */
export const OUTPUT_ONLY = ["revision", "status", "placements", "endpoints"] as const;

/** One replica's placement as an output. */
export interface PlacementOutput {
  readonly replica: number;
  /** Node the replica runs on (or would, in a preview); "" while unplaced. */
  readonly node: string;
  /** Replica state (`running`, `pending`, ...); in a preview the planned action (`create`, `keep`, ...). */
  readonly state: string;
  /** Why the replica is where it is, or why it is not placed: the scheduler's one-line diagnosis. */
  readonly reason: string;
}

/** One way to reach a replica. */
export interface EndpointOutput {
  readonly replica: number;
  readonly kind: string;
  readonly address: string;
  readonly port: number;
  readonly targetPort: number;
  readonly protocol: string;
  readonly network: string;
}

function reasonOf(replica: api.ReplicaStatus): string {
  return replica.reason?.message || replica.placement?.message || "";
}

/** The outputs for a workload read from Persys: `inputs` (canonical) plus its observed status. */
export function outputsOf(inputs: Inputs, workload: api.Workload): Inputs {
  const replicas = workload.status?.replicas ?? [];
  return {
    ...inputs,
    revision: workload.status?.revision ?? "",
    status: enumLabel(api.WorkloadState, workload.status?.state ?? 0),
    placements: replicas.map(
      (r): PlacementOutput => ({
        replica: r.index,
        node: r.nodeId,
        state: enumLabel(api.ReplicaState, r.state),
        reason: reasonOf(r),
      }),
    ),
    endpoints: replicas.flatMap((r) =>
      r.endpoints.map(
        (e): EndpointOutput => ({
          replica: r.index,
          kind: enumLabel(api.EndpointKind, e.kind),
          address: e.address,
          port: e.port,
          targetPort: e.targetPort,
          protocol: e.protocol ? enumLabel(api.Protocol, e.protocol) : "",
          network: e.network,
        }),
      ),
    ),
  };
}

/** The outputs a preview shows for a planned workload: placements from the dry run, no endpoints yet. */
export function plannedOutputsOf(inputs: Inputs, plan: api.PlanWorkloadResponse): Inputs {
  return {
    ...inputs,
    revision: plan.revision,
    status: plan.schedulable ? "planned" : "unschedulable",
    placements: plan.replicas.map(
      (r): PlacementOutput => ({
        replica: r.replicaIndex,
        node: r.nodeId,
        state: enumLabel(api.PlanAction, r.action),
        reason: r.diagnosis?.message ?? "",
      }),
    ),
    endpoints: [],
  };
}

/** One line per replica of a plan, for the preview's diagnostics: `replica 0 → node-a (create)`. */
export function describePlan(plan: api.PlanWorkloadResponse): string {
  const lines = plan.replicas.map((r) => {
    const action = enumLabel(api.PlanAction, r.action);
    return r.nodeId
      ? `replica ${r.replicaIndex} → ${r.nodeId} (${action})`
      : `replica ${r.replicaIndex} unschedulable: ${r.diagnosis?.message ?? "no node fits"}`;
  });
  return `planned placement (revision ${plan.revision.slice(0, 12)}): ${lines.join("; ") || "no replicas"}`;
}
