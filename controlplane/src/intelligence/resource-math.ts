import { api } from "@persys/schema";

export const dimensions = [
  { name: "cpu", dimension: api.ResourceDimension.RESOURCE_DIMENSION_CPU, unit: "millicores", field: "cpuMillicores" },
  { name: "memory", dimension: api.ResourceDimension.RESOURCE_DIMENSION_MEMORY, unit: "MiB", field: "memoryMib" },
  { name: "disk", dimension: api.ResourceDimension.RESOURCE_DIMENSION_DISK, unit: "GiB", field: "diskGib" },
] as const satisfies ReadonlyArray<{
  name: string;
  dimension: api.ResourceDimension;
  unit: string;
  field: keyof api.Resources;
}>;

export type DimensionInfo = (typeof dimensions)[number];

export const dimensionOf = (d: api.ResourceDimension): DimensionInfo | undefined =>
  dimensions.find((x) => x.dimension === d);

/** Free = allocatable − allocated in one dimension (0 when unknown). */
export function freeOn(node: api.Node, info: DimensionInfo): number {
  return (node.allocatable?.[info.field] ?? 0) - (node.allocated?.[info.field] ?? 0);
}

/** Whether the scheduler may place on the node now (ready, not cordoned or draining). */
export const schedulable = (node: api.Node): boolean =>
  node.state === api.NodeState.NODE_STATE_READY && !node.cordoned && !node.draining;
