/**
 * What every Persys resource shares: the common inputs, the observed outputs, and how a resource's
 * property bag is built so the engine's outputs are read back into the declared properties.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { Endpoint, PlacementArgs, ReplicaPlacement, UpdateStrategyArgs } from "./types.js";

type In<T> = pulumi.Input<T>;

/** Inputs of every workload resource. */
export interface WorkloadArgs {
  /** Workload id in Persys (DNS-1123 label). Default: the resource name plus a random suffix. Changing it replaces the workload. */
  name?: In<string>;
  /** Copies to run. Default 1; 0 keeps the workload but runs nothing. */
  replicas?: In<number>;
  /** CPU reserved per replica (1000 = one core). */
  cpuMillicores?: In<number>;
  /** Disk reserved per replica. */
  diskGiB?: In<number>;
  labels?: In<Record<string, In<string>>>;
  placement?: In<PlacementArgs>;
  /** `running` (the default) or `stopped`. */
  desiredState?: In<"running" | "stopped">;
  update?: In<UpdateStrategyArgs>;
}

/** Input names of {@link WorkloadArgs}, in schema order. */
export const WORKLOAD_INPUTS = [
  "name",
  "replicas",
  "cpuMillicores",
  "diskGiB",
  "labels",
  "placement",
  "desiredState",
  "update",
] as const;

/** Output-only properties of every workload resource. */
export const WORKLOAD_OUTPUTS = ["revision", "status", "placements", "endpoints"] as const;

/** The observed outputs every workload resource declares. */
export interface WorkloadOutputs {
  /** The workload id in Persys (also the resource's `id`). */
  readonly name: pulumi.Output<string>;
  /** Content hash of the applied spec. */
  readonly revision: pulumi.Output<string>;
  /** `running`, `pending`, `degraded`, `failed`, ...; in a preview `planned` or `unschedulable`. */
  readonly status: pulumi.Output<string>;
  /** Node and reason per replica (in a preview: the planned placement). */
  readonly placements: pulumi.Output<ReplicaPlacement[]>;
  readonly endpoints: pulumi.Output<Endpoint[]>;
}

/**
 * The property bag for `CustomResource`: every input and output name present (outputs and unset
 * inputs as `undefined`), because the runtime reads back only the keys it was given.
 */
export function propertyBag(
  args: object | undefined,
  inputs: readonly string[],
  outputs: readonly string[] = WORKLOAD_OUTPUTS,
): pulumi.Inputs {
  const source = (args ?? {}) as Record<string, unknown>;
  const bag: pulumi.Inputs = {};
  for (const key of inputs) bag[key] = source[key];
  for (const key of outputs) bag[key] = undefined;
  return bag;
}
