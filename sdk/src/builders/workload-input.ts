import { api, type FieldViolation, invalid, withDefaults, workloadViolations } from "@persys/schema";
import { parseEnum } from "../enums/friendly-enums.js";
import { checkKeys } from "./input-keys.js";
import { type PlacementInput, placementOf } from "./placement-input.js";

/** Fields every workload kind shares, in friendly form. */
export interface WorkloadInput {
  /** DNS-1123 label (lowercase letters, digits, `-`; 1..63). Apply creates or updates by id. */
  readonly id: string;
  /** Copies to run. Default 1; 0 keeps the workload but runs nothing. */
  readonly replicas?: number | undefined;
  /** CPU reserved per replica (1000 = one core). Default 0 (none reserved). */
  readonly cpuMillicores?: number | undefined;
  /** Memory reserved per replica. Default 0 (VMs: the guest memory). */
  readonly memoryMiB?: number | undefined;
  /** Disk reserved per replica. Default 0 (VMs: the sum of their disks). */
  readonly diskGiB?: number | undefined;
  /** Free labels, matched by label selectors. */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly placement?: PlacementInput | undefined;
  /** Default `running`. */
  readonly desiredState?: "running" | "stopped" | undefined;
  /** How replicas move to a new revision. Default rolling, one at a time. */
  readonly update?:
    | {
        readonly strategy?: "rolling" | "recreate" | undefined;
        /** Rolling only: replicas down at once. Default 1. */
        readonly maxUnavailable?: number | undefined;
      }
    | undefined;
}

/** The keys of {@link WorkloadInput}, for the unknown-key check of each builder. */
export const workloadInputKeys = [
  "id",
  "replicas",
  "cpuMillicores",
  "memoryMiB",
  "diskGiB",
  "labels",
  "placement",
  "desiredState",
  "update",
];

/** The common `Workload` fields for `input` (spec unset); unknown nested keys go into `violations`. */
export function workloadBase(
  input: WorkloadInput,
  kind: api.WorkloadKind,
  violations: FieldViolation[],
  resourceDefaults: { cpuMillicores?: number; memoryMiB?: number; diskGiB?: number } = {},
): api.Workload {
  if (input.update) checkKeys(input.update, ["strategy", "maxUnavailable"], "update", violations);
  const desired =
    input.desiredState === undefined
      ? api.DesiredState.DESIRED_STATE_RUNNING
      : (parseEnum(api.DesiredState, input.desiredState) ?? badEnum(violations, "desiredState", input.desiredState));
  const strategy =
    input.update?.strategy === undefined
      ? api.UpdateStrategyType.UPDATE_STRATEGY_TYPE_ROLLING
      : (parseEnum(api.UpdateStrategyType, input.update.strategy) ??
        badEnum(violations, "updateStrategy.type", input.update.strategy));
  return api.Workload.fromPartial({
    id: input.id,
    kind,
    replicas: input.replicas ?? 1,
    resources: {
      cpuMillicores: input.cpuMillicores ?? resourceDefaults.cpuMillicores ?? 0,
      memoryMib: input.memoryMiB ?? resourceDefaults.memoryMiB ?? 0,
      diskGib: input.diskGiB ?? resourceDefaults.diskGiB ?? 0,
    },
    placement: input.placement ? placementOf(input.placement, "placement", violations) : undefined,
    desiredState: desired,
    labels: { ...input.labels },
    updateStrategy: { type: strategy, maxUnavailable: input.update?.maxUnavailable ?? 1 },
  });
}

/** Records a bad enum spelling and returns UNSPECIFIED (0). */
export function badEnum(violations: FieldViolation[], path: string, value: unknown): 0 {
  violations.push({ path, reason: `"${String(value)}" is not a valid value` });
  return 0;
}

/**
 * Applies defaults, validates, and returns the finished workload.
 *
 * @throws PersysError INVALID_SPEC naming every bad field (builder-level ones first).
 */
export function finish(workload: api.Workload, violations: readonly FieldViolation[]): api.Workload {
  const complete = withDefaults(workload);
  const all = [...violations, ...workloadViolations(complete)];
  if (all.length > 0) throw invalid("INVALID_SPEC", all, `workload ${workload.id || "(no id)"}`);
  return complete;
}
