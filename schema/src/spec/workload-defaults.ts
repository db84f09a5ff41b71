import { Protocol } from "../gen/persys/api/v1/container.js";
import { Accelerator, DiskFormat } from "../gen/persys/api/v1/vm.js";
import { DesiredState, UpdateStrategyType, type Workload, WorkloadKind } from "../gen/persys/api/v1/workload.js";

const kindOfSpec = {
  container: WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: WorkloadKind.WORKLOAD_KIND_VM,
} as const;

/**
 * Returns a copy of the workload with defaults made explicit: kind from the spec when unset,
 * 1 replica, desired state RUNNING, rolling updates one at a time, TCP ports, qcow2 disks and an
 * automatically chosen VM accelerator. Applying defaults twice changes nothing, so the revision of
 * a spec written with or without its defaults is the same. Status is dropped (it is output only).
 */
export function withDefaults(workload: Workload): Workload {
  const copy: Workload = structuredClone({ ...workload, status: undefined });
  if (copy.kind === WorkloadKind.WORKLOAD_KIND_UNSPECIFIED && copy.spec) copy.kind = kindOfSpec[copy.spec.$case];
  copy.replicas ??= 1;
  if (copy.desiredState === DesiredState.DESIRED_STATE_UNSPECIFIED)
    copy.desiredState = DesiredState.DESIRED_STATE_RUNNING;
  copy.resources ??= { cpuMillicores: 0, memoryMib: 0, diskGib: 0 };
  copy.updateStrategy ??= { type: UpdateStrategyType.UPDATE_STRATEGY_TYPE_ROLLING, maxUnavailable: 1 };
  if (copy.updateStrategy.type === UpdateStrategyType.UPDATE_STRATEGY_TYPE_UNSPECIFIED) {
    copy.updateStrategy.type = UpdateStrategyType.UPDATE_STRATEGY_TYPE_ROLLING;
  }
  if (copy.updateStrategy.maxUnavailable === 0) copy.updateStrategy.maxUnavailable = 1;
  const spec = copy.spec;
  if (spec?.$case === "container") {
    for (const port of spec.value.ports) {
      if (port.protocol === Protocol.PROTOCOL_UNSPECIFIED) port.protocol = Protocol.PROTOCOL_TCP;
    }
  } else if (spec?.$case === "vm") {
    if (spec.value.accelerator === Accelerator.ACCELERATOR_UNSPECIFIED)
      spec.value.accelerator = Accelerator.ACCELERATOR_AUTO;
    for (const disk of spec.value.disks) {
      if (disk.format === DiskFormat.DISK_FORMAT_UNSPECIFIED) disk.format = DiskFormat.DISK_FORMAT_QCOW2;
    }
  }
  return copy;
}
