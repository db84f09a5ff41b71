import { api, type ErrorCode, isErrorCode } from "@persys/schema";
import type { EventStore, StoredEvent } from "../events/event-store.js";

/** Event types the control plane records; history lives in the event store, never in etcd. */
export type ClusterEventType =
  | "WorkloadApplied"
  /** An inline compose file uses keys Persys ignores (docs/compose.md, "Unsupported keys"). */
  | "ComposeKeysIgnored"
  | "WorkloadDeleted"
  | "ReplicaPlaced"
  | "ReplicaUnschedulable"
  | "ReplicaApplied"
  | "ReplicaStateChanged"
  /** RestartWorkload in reboot mode: the replica reports the reboot done (same runtime object). */
  | "ReplicaRebooted"
  | "ReplicaFailed"
  | "ReplicaRetryScheduled"
  | "ReplicaRemoved"
  | "ReplicaMoved"
  | "ReplicaMoveBlocked"
  | "StrayStopped"
  | "NodeRegistered"
  | "NodeReady"
  | "NodeNotReady"
  | "NodeLost"
  | "NodeCordoned"
  | "NodeUncordoned"
  | "NodeDrained"
  | "LeaderElected"
  /** Who called which mutating method, when, with which result (auth/request-audit.ts). */
  | "RequestAudited";

export interface ClusterEvent {
  readonly type: ClusterEventType;
  readonly severity?: "info" | "warning" | "error";
  readonly workloadId?: string;
  readonly replicaIndex?: number;
  readonly nodeId?: string;
  readonly message: string;
  readonly code?: ErrorCode;
  /** Small extra facts (diagnosis summary, revision, generation). */
  readonly attributes?: Readonly<Record<string, string>>;
}

export const EVENTS_STREAM = "events";
export const workloadStream = (workloadId: string) => `events:workload:${workloadId}`;

const severities = {
  info: api.EventSeverity.EVENT_SEVERITY_INFO,
  warning: api.EventSeverity.EVENT_SEVERITY_WARNING,
  error: api.EventSeverity.EVENT_SEVERITY_ERROR,
} as const;

/**
 * Writes every decision and transition to the event store: the global stream and the workload's
 * own stream (for fast per-workload reads), in one `appendEach`. Recording never throws: when the event store is
 * degraded, the event is counted as dropped and scheduling carries on.
 */
export class EventRecorder {
  dropped = 0;

  constructor(
    private readonly events: EventStore,
    private readonly onDrop: (error: unknown) => void = () => {},
  ) {}

  async record(event: ClusterEvent): Promise<string | undefined> {
    const fields: Record<string, string> = {
      type: event.type,
      severity: event.severity ?? "info",
      message: event.message,
    };
    if (event.workloadId) fields.workload = event.workloadId;
    if (event.replicaIndex !== undefined) fields.replica = String(event.replicaIndex);
    if (event.nodeId) fields.node = event.nodeId;
    if (event.code) fields.code = event.code;
    const record = { fields, ...(event.attributes ? { payload: { ...event.attributes } } : {}) };
    try {
      const streams = event.workloadId ? [EVENTS_STREAM, workloadStream(event.workloadId)] : [EVENTS_STREAM];
      const [id] = await this.events.appendEach(streams, record);
      return id;
    } catch (error) {
      this.dropped++;
      this.onDrop(error);
      return undefined;
    }
  }
}

/** The API form of a stored event. */
export function apiEvent(stored: StoredEvent): api.Event {
  const f = stored.fields;
  const attributes: Record<string, string> = {};
  if (stored.payload && typeof stored.payload === "object" && !Array.isArray(stored.payload)) {
    for (const [key, value] of Object.entries(stored.payload)) attributes[key] = String(value);
  }
  return {
    id: stored.id,
    time: new Date(stored.timeMs),
    severity: severities[(f.severity ?? "info") as keyof typeof severities] ?? api.EventSeverity.EVENT_SEVERITY_INFO,
    type: f.type ?? "",
    workloadId: f.workload ?? "",
    replicaIndex: f.replica !== undefined ? Number(f.replica) : undefined,
    nodeId: f.node ?? "",
    message: f.message ?? "",
    code: f.code && isErrorCode(f.code) ? api.errorCodeFromJSON(f.code) : api.ErrorCode.ERROR_CODE_UNSPECIFIED,
    attributes,
  };
}
