import type { Dimension } from "../model/resources.js";
import type { ChangeAspect } from "../snapshot/cluster-change.js";

/**
 * The fixed reasons a filter can give for rejecting a node. Diagnoses carry these codes; the
 * numbers behind them travel in structured fields (`exhaustion`, `FilterDetail`), never in the code.
 */
export const Reason = {
  NODE_NOT_READY: "NODE_NOT_READY",
  NODE_CORDONED: "NODE_CORDONED",
  NODE_DRAINING: "NODE_DRAINING",
  RUNTIME_MISSING: "RUNTIME_MISSING",
  CAPABILITY_MISSING: "CAPABILITY_MISSING",
  ARCH_MISMATCH: "ARCH_MISMATCH",
  NODE_SELECTOR_MISMATCH: "NODE_SELECTOR_MISMATCH",
  NODE_AFFINITY_MISMATCH: "NODE_AFFINITY_MISMATCH",
  SPREAD_LABEL_MISSING: "SPREAD_LABEL_MISSING",
  SPREAD_MAX_SKEW: "SPREAD_MAX_SKEW",
  INSUFFICIENT_CPU: "INSUFFICIENT_CPU",
  INSUFFICIENT_MEMORY: "INSUFFICIENT_MEMORY",
  INSUFFICIENT_DISK: "INSUFFICIENT_DISK",
  HOST_PORT_IN_USE: "HOST_PORT_IN_USE",
  REPLICA_ANTI_AFFINITY: "REPLICA_ANTI_AFFINITY",
  WORKLOAD_ANTI_AFFINITY: "WORKLOAD_ANTI_AFFINITY",
  AVOIDED_BY_WORKLOAD: "AVOIDED_BY_WORKLOAD",
  NODE_BEING_LEFT: "NODE_BEING_LEFT",
  NOT_MOVE_TARGET: "NOT_MOVE_TARGET",
} as const;

/** A reason code. */
export type ReasonCode = (typeof Reason)[keyof typeof Reason];

/** What the catalogue says about a reason. */
export interface ReasonInfo {
  /** Words after the count in a message: "7 insufficient memory (...)", "5 missing capability kvm". */
  readonly phrase: string;
  /** Changes that can make a node stop failing for this reason (a new node can fix anything). */
  readonly fixedBy: readonly ChangeAspect[];
  /** For resource reasons: the dimension, whose numbers come from the diagnosis' exhaustion entry. */
  readonly dimension?: Dimension;
}

/** Every reason with its wording and what can fix it. */
export const reasonCatalog: Readonly<Record<ReasonCode, ReasonInfo>> = {
  NODE_NOT_READY: { phrase: "not ready", fixedBy: ["node-schedulable"] },
  NODE_CORDONED: { phrase: "cordoned", fixedBy: ["node-schedulable"] },
  NODE_DRAINING: { phrase: "draining", fixedBy: ["node-schedulable"] },
  RUNTIME_MISSING: { phrase: "without runtime", fixedBy: ["capabilities"] },
  CAPABILITY_MISSING: { phrase: "missing capability", fixedBy: ["capabilities"] },
  ARCH_MISMATCH: { phrase: "with another arch, need", fixedBy: ["capabilities"] },
  NODE_SELECTOR_MISMATCH: { phrase: "didn't match the node selector", fixedBy: ["labels"] },
  NODE_AFFINITY_MISMATCH: { phrase: "didn't match required node affinity", fixedBy: ["labels"] },
  SPREAD_LABEL_MISSING: { phrase: "missing spread label", fixedBy: ["labels"] },
  SPREAD_MAX_SKEW: { phrase: "would exceed spread", fixedBy: ["placements", "topology", "labels"] },
  INSUFFICIENT_CPU: { phrase: "insufficient cpu", fixedBy: ["capacity"], dimension: "cpu" },
  INSUFFICIENT_MEMORY: { phrase: "insufficient memory", fixedBy: ["capacity"], dimension: "memory" },
  INSUFFICIENT_DISK: { phrase: "insufficient disk", fixedBy: ["capacity"], dimension: "disk" },
  HOST_PORT_IN_USE: { phrase: "with host port in use", fixedBy: ["host-ports"] },
  REPLICA_ANTI_AFFINITY: { phrase: "already running a replica of this workload", fixedBy: ["placements"] },
  WORKLOAD_ANTI_AFFINITY: { phrase: "running a workload this one avoids", fixedBy: ["placements"] },
  AVOIDED_BY_WORKLOAD: { phrase: "running a workload that avoids this one", fixedBy: ["placements"] },
  NODE_BEING_LEFT: { phrase: "being left by this replica (moving)", fixedBy: [] },
  NOT_MOVE_TARGET: { phrase: "not the target of the move", fixedBy: [] },
};

/** The reasons a change with these aspects may fix. */
export function reasonsFixedBy(aspects: readonly ChangeAspect[]): Set<ReasonCode> {
  const out = new Set<ReasonCode>();
  for (const [code, info] of Object.entries(reasonCatalog) as [ReasonCode, ReasonInfo][]) {
    if (aspects.includes("node-added") || info.fixedBy.some((a) => aspects.includes(a))) out.add(code);
  }
  return out;
}
