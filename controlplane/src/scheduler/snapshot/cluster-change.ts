/**
 * What a change to the cluster may have made better for a pending replica. The snapshot reports
 * the aspects of every change it applies; the pending queue matches them against the reasons a
 * replica failed for (see `reasonCatalog[reason].fixedBy`).
 *
 * - `node-added`: a new node; it can fix anything.
 * - `node-schedulable`: a node became ready, was uncordoned or stopped draining.
 * - `labels`: a node's labels changed.
 * - `capabilities`: a node's capabilities, runtimes or arch changed.
 * - `capacity`: a node has more free resources (a replica released, allocatable grew).
 * - `host-ports`: host ports were freed on a node.
 * - `placements`: a replica left a node (anti-affinity, spread counts).
 * - `topology`: the set of eligible spread domains may have changed (node removed, relabelled,
 *   became (un)schedulable).
 */
export type ChangeAspect =
  | "node-added"
  | "node-schedulable"
  | "labels"
  | "capabilities"
  | "capacity"
  | "host-ports"
  | "placements"
  | "topology";

/** A replica by identity. */
export interface ReplicaRef {
  readonly workloadId: string;
  readonly replica: number;
}

/** One applied change, with the generation the snapshot reached by applying it. */
export interface ClusterChange {
  readonly generation: number;
  readonly kind: "node-added" | "node-updated" | "node-removed" | "replica-released" | "usage-updated";
  readonly nodeId: string;
  /** What may have improved; empty when nothing a pending replica waits for got better. */
  readonly aspects: readonly ChangeAspect[];
  /** For `node-removed`: the replicas that were reserved on the node and are now released. */
  readonly displaced?: readonly ReplicaRef[];
}
