import { type FieldViolation, invalid } from "../errors/persys-error.js";
import { type Workload, WorkloadKind } from "../gen/persys/api/v1/workload.js";
import { validatePlacement } from "./validate-placement.js";
import { validateCompose, validateContainer, validateVm } from "./validate-runtime-specs.js";
import { checkDnsLabel, checkLabels, checkRange, Violations } from "./violations.js";

const kindOfSpec = {
  container: WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: WorkloadKind.WORKLOAD_KIND_VM,
} as const;

/** The most replicas one workload may ask for. */
export const MAX_REPLICAS = 1000;

/**
 * Every problem with a workload's input fields, as field paths in the API's JSON names
 * (`container.ports[1].hostPort`). An empty list means the workload may be applied. Pure: the same
 * check runs in the SDK builders, the CLI, the Pulumi provider's `check` and the server.
 */
export function workloadViolations(workload: Workload): FieldViolation[] {
  const v = new Violations();
  checkDnsLabel(v, workload.id, "id", "workload id");
  if (workload.replicas !== undefined) checkRange(v, workload.replicas, "replicas", 0, MAX_REPLICAS);
  const resources = workload.resources;
  if (resources) {
    const item = v.at("resources");
    checkRange(item, resources.cpuMillicores, "cpuMillicores", 0, 1_024_000);
    checkRange(item, resources.memoryMib, "memoryMib", 0, 16_777_216);
    checkRange(item, resources.diskGib, "diskGib", 0, 1_048_576);
  }
  checkLabels(v, workload.labels, "labels");
  if (workload.placement) validatePlacement(v.at("placement"), workload.placement);
  if (workload.updateStrategy && workload.updateStrategy.maxUnavailable < 0) {
    v.at("updateStrategy").add("must be >= 0", "maxUnavailable");
  }
  const spec = workload.spec;
  if (!spec) {
    v.add("one of container, compose or vm is required", "container");
  } else {
    if (workload.kind === WorkloadKind.WORKLOAD_KIND_UNSPECIFIED) v.add("is required", "kind");
    else if (kindOfSpec[spec.$case] !== workload.kind) v.add(`does not match the ${spec.$case} spec given`, "kind");
    if (spec.$case === "container") validateContainer(v.at("container"), spec.value);
    else if (spec.$case === "compose") validateCompose(v.at("compose"), spec.value);
    else validateVm(v.at("vm"), spec.value);
  }
  return v.list;
}

/** Throws `INVALID_SPEC` naming every bad field, or returns the workload unchanged. */
export function assertValidWorkload(workload: Workload): Workload {
  const violations = workloadViolations(workload);
  if (violations.length > 0) throw invalid("INVALID_SPEC", violations, `workload ${workload.id || "(no id)"}`);
  return workload;
}
