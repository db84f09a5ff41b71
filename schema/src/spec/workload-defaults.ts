import { readCompose } from "../compose/compose-parser.js";
import { stackResources } from "../compose/compose-resources.js";
import { Protocol } from "../gen/persys/api/v1/container.js";
import { Accelerator, DiskFormat } from "../gen/persys/api/v1/vm.js";
import {
  DesiredState,
  type Resources,
  UpdateStrategyType,
  Workload,
  WorkloadKind,
} from "../gen/persys/api/v1/workload.js";

const isZero = (r: Resources) => r.cpuMillicores === 0 && r.memoryMib === 0 && r.diskGib === 0;

const kindOfSpec = {
  container: WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: WorkloadKind.WORKLOAD_KIND_VM,
} as const;

/**
 * Returns a copy of the workload with defaults made explicit: kind from the spec when unset,
 * 1 replica, desired state RUNNING, for an inline compose stack with no resources the sum of its
 * services' `deploy.resources` (see `stackResources`), rolling updates one at a time, TCP ports, qcow2 disks and an
 * automatically chosen VM accelerator. Applying defaults twice changes nothing, so the revision of
 * a spec written with or without its defaults is the same. Status is dropped (it is output only).
 */
export function withDefaults(workload: Workload): Workload {
  // The generated deep copy: several times cheaper than structuredClone, which applies pay per workload.
  const copy: Workload = Workload.fromPartial({ ...workload, status: undefined });
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
  if (spec?.$case === "compose" && spec.value.source?.$case === "inlineYaml" && isZero(copy.resources)) {
    const parsed = readCompose({
      file: "inline",
      content: spec.value.source.value,
      env: spec.value.env,
      profiles: spec.value.profiles,
    });
    if (parsed.ok) copy.resources = stackResources(parsed.project);
  }
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
