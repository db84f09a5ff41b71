import { api, invalid } from "@persys/schema";
import { enumMemberNames, friendlyEnumNames, type NumericEnum, parseEnum } from "./friendly-enums.js";

/** Friendly name of a workload kind. */
export type WorkloadKindName = "container" | "compose" | "vm";
/** Friendly name of a workload state (`api.WorkloadState`). */
export type WorkloadStateName = "pending" | "progressing" | "running" | "degraded" | "stopped" | "failed" | "deleting";
/** Friendly name of a replica state (`api.ReplicaState`). */
export type ReplicaStateName =
  | "pending"
  | "placed"
  | "starting"
  | "running"
  | "stopping"
  | "stopped"
  | "failed"
  | "deleting"
  | "unknown";
/** Friendly name of a node state (`api.NodeState`). */
export type NodeStateName = "ready" | "not-ready" | "lost";
/** Friendly name of an event severity (`api.EventSeverity`). */
export type EventSeverityName = "info" | "warning" | "error";
/** How much of a workload's status reads return: `basic` leaves out the placement diagnoses. */
export type WorkloadViewName = "basic" | "full";

/**
 * An enum value given as the generated enum or its friendly name, converted to the enum.
 *
 * @throws PersysError INVALID_ARGUMENT naming `path` and the accepted names for an unknown name.
 */
export function enumInput<E extends NumericEnum>(values: E, input: E[keyof E] | string, path: string): E[keyof E] {
  if (typeof input === "number") return input;
  const parsed = parseEnum(values, input);
  if (parsed === undefined) {
    const accepted = friendlyEnumNames(enumMemberNames(values)).join(", ");
    throw invalid("INVALID_ARGUMENT", [{ path, reason: `"${input}" is not one of ${accepted}` }]);
  }
  return parsed;
}

/** `container` → `api.WorkloadKind.WORKLOAD_KIND_CONTAINER`; undefined stays undefined (no filter). */
export const kindInput = (input: api.WorkloadKind | WorkloadKindName | undefined, path = "kind") =>
  input === undefined ? api.WorkloadKind.WORKLOAD_KIND_UNSPECIFIED : enumInput(api.WorkloadKind, input, path);

/** `running` → `api.WorkloadState.WORKLOAD_STATE_RUNNING`; undefined is UNSPECIFIED (no filter). */
export const stateInput = (input: api.WorkloadState | WorkloadStateName | undefined, path = "state") =>
  input === undefined ? api.WorkloadState.WORKLOAD_STATE_UNSPECIFIED : enumInput(api.WorkloadState, input, path);

/** `ready` → `api.NodeState.NODE_STATE_READY`; undefined is UNSPECIFIED (no filter). */
export const nodeStateInput = (input: api.NodeState | NodeStateName | undefined, path = "state") =>
  input === undefined ? api.NodeState.NODE_STATE_UNSPECIFIED : enumInput(api.NodeState, input, path);

/** `warning` → `api.EventSeverity.EVENT_SEVERITY_WARNING`; undefined is UNSPECIFIED (all). */
export const severityInput = (input: api.EventSeverity | EventSeverityName | undefined, path = "minSeverity") =>
  input === undefined ? api.EventSeverity.EVENT_SEVERITY_UNSPECIFIED : enumInput(api.EventSeverity, input, path);

/** `full` → `api.WorkloadView.WORKLOAD_VIEW_FULL`; undefined is UNSPECIFIED (the server's default). */
export const viewInput = (input: api.WorkloadView | WorkloadViewName | undefined, path = "view") =>
  input === undefined ? api.WorkloadView.WORKLOAD_VIEW_UNSPECIFIED : enumInput(api.WorkloadView, input, path);
