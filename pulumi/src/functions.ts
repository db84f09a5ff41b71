import * as pulumi from "@pulumi/pulumi";
import type { NodeInfo, ReplicaPlan } from "./types.js";

export interface GetNodesArgs {
  /** Selector on node labels (`zone=a`). */
  labelSelector?: string;
  /** Only nodes with this capability, e.g. `kvm`. */
  capability?: string;
  /** `ready`, `not-ready` or `lost`. */
  state?: string;
}

export interface GetNodesResult {
  readonly nodes: NodeInfo[];
}

/** The cluster's nodes, ordered by id. */
export function getNodes(args: GetNodesArgs = {}, opts?: pulumi.InvokeOptions): Promise<GetNodesResult> {
  return pulumi.runtime.invoke("persys:index:getNodes", { ...args }, opts);
}

export interface GetPlanArgs {
  /** `container`, `compose` or `vm`. */
  kind: "container" | "compose" | "vm";
  /** The resource's inputs, as given to Container, ComposeStack or VirtualMachine (plain values). */
  spec: Record<string, unknown>;
}

export interface GetPlanResult {
  /** Every replica that needs a node would get one. */
  readonly schedulable: boolean;
  readonly revision: string;
  readonly changed: boolean;
  readonly replicas: ReplicaPlan[];
  /** Where the replicas go, or why they cannot be placed ("0/3 nodes are available: ..."). */
  readonly message: string;
}

/** Dry-run placement of a workload with the scheduler's diagnosis; changes nothing. */
export function getPlan(args: GetPlanArgs, opts?: pulumi.InvokeOptions): Promise<GetPlanResult> {
  return pulumi.runtime.invoke("persys:index:getPlan", { ...args }, opts);
}
