import type { Resources } from "../model/resources.js";
import type { SchedulerNode } from "../model/scheduler-node.js";
import type { NodeClass } from "./node-classes.js";

/** A replica's hold on a node: what it requested, kept until released. */
export interface Reservation {
  readonly workloadId: string;
  readonly replica: number;
  readonly entry: NodeEntry;
  readonly resources: Resources;
  /** Host port keys (see `hostPortKey`). */
  readonly hostPorts: readonly number[];
}

/**
 * The snapshot's record of one node. `slot` is its index in the snapshot's dense per-node arrays;
 * it changes when another node is removed (the last node moves into the hole), so sparse indexes
 * refer to entries, never to slots.
 */
export interface NodeEntry {
  readonly id: string;
  slot: number;
  node: SchedulerNode;
  cls: NodeClass;
  readonly reservations: Set<Reservation>;
  /** Host port keys the node reported as used outside Persys. */
  ownPorts: number[];
}

/** The key of a replica in reservation maps. */
export function replicaKey(workloadId: string, replica: number): string {
  return `${workloadId}#${replica}`;
}
