import { api } from "@persys/schema";
import { decodeText, jsonText, parseJsonText } from "../state/value-codec.js";

/**
 * What the control plane stores, one JSON document per key (see keys.ts). Nested protobuf types are
 * kept in their proto3 JSON form (`toJSON`), so a record is readable with `etcdctl get` and decodes
 * with the generated `fromJSON`.
 */

/** A workload's input fields and bookkeeping. */
export interface WorkloadRecord {
  /** `api.Workload` JSON: input fields with defaults applied, no status. */
  readonly workload: unknown;
  /** Content hash of what replicas run (see `workloadRevision`). */
  readonly revision: string;
  /** Grows by one on every accepted change of input fields. */
  readonly generation: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Set by Delete: replicas are being removed, then the record goes. */
  readonly deletionRequestedAt?: string;
  /** Bumped by Restart: replicas are recreated (rolling) at the same revision. */
  readonly restartNonce?: number;
  /** Bumped by Restart of one replica (by index): that replica alone is recreated. */
  readonly replicaRestartNonces?: Readonly<Record<string, number>>;
  /** Bumped by Restart in reboot mode: replicas are rebooted in place (rolling) at the same revision. */
  readonly rebootNonce?: number;
  /** Bumped by a reboot of one replica (by index): that replica alone is rebooted. */
  readonly replicaRebootNonces?: Readonly<Record<string, number>>;
  /** Bumped by Retry: failed and pending replicas are tried again now. */
  readonly retryNonce?: number;
  /** Set by MoveReplica, per replica index: the copy to move and why (see {@link ReplicaMoveRecord}). */
  readonly replicaMoves?: Readonly<Record<string, ReplicaMoveRecord>>;
}

/**
 * A requested move of one replica. It applies to the copy placed on `fromNode` at `fromPlacedAt`
 * only: once the leader has re-placed the replica (or it was re-placed for any other reason), the
 * request is spent and changes nothing.
 */
export interface ReplicaMoveRecord {
  readonly fromNode: string;
  readonly fromPlacedAt: string;
  /** The one node it may go to; absent: any node but `fromNode`. */
  readonly toNode?: string;
  readonly reason: string;
  readonly requestedAt: string;
  /** Who asked (identity), when known. */
  readonly by?: string;
}

/** Whether a move request applies to this assignment (the very copy it names). */
export function moveApplies(move: ReplicaMoveRecord | undefined, a: AssignmentRecord): move is ReplicaMoveRecord {
  return move !== undefined && move.fromNode === a.nodeId && move.fromPlacedAt === a.placedAt;
}

/**
 * A replica placed on a node by the leader. Its fencing generation is the key's createRevision: a
 * store-assigned number that grows with each (re)placement, so it never needs writing.
 */
export interface AssignmentRecord {
  readonly workloadId: string;
  readonly index: number;
  readonly nodeId: string;
  readonly placedAt: string;
  /** `api.PlacementDiagnosis` JSON of the decision. */
  readonly diagnosis: unknown;
}

/** A replica no node can take now, with the latest diagnosis. */
export interface PendingRecord {
  readonly workloadId: string;
  readonly index: number;
  /** `api.PlacementDiagnosis` JSON. */
  readonly diagnosis: unknown;
  readonly since: string;
}

/** The latest state of a replica, written only when it changes. */
export interface ReplicaStatusRecord {
  readonly nodeId: string;
  /** `api.ReplicaReport` JSON as the node (or the leader, for failures it decides) reported it. */
  readonly report: unknown;
  /** The agent revision id the report refers to (`<revision>` or `<revision>-r<n>`). */
  readonly agentRevision?: string;
  readonly updatedAt: string;
}

/** A node as registered, plus operator and liveness bookkeeping. */
export interface NodeRecord {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  /** `api.NodeDescription` JSON. */
  readonly description: unknown;
  readonly agentVersion: string;
  /** host:port of the node's persys.agent.v1 server. */
  readonly endpoint: string;
  readonly clusterId?: string;
  readonly registeredAt: string;
  readonly cordoned?: boolean;
  readonly cordonReason?: string;
  readonly draining?: boolean;
  /** When its liveness lease expired (NotReady since). Cleared when it comes back. */
  readonly notReadySince?: string;
  /** When its replicas were re-placed elsewhere (lost after `lostAfter`). Cleared when it comes back. */
  readonly lostAt?: string;
}

/** Held under a lease renewed by heartbeats: present while the node is live. */
export interface LivenessRecord {
  readonly nodeId: string;
  readonly lease: string;
  readonly since: string;
}

/** A replica a node runs that is not (or no longer) assigned to it: the leader stops it there. */
export interface StrayRecord {
  readonly nodeId: string;
  readonly workloadId: string;
  readonly index: number;
  /** The runtime name to delete on the node. */
  readonly name: string;
  readonly seenAt: string;
}

/**
 * A secret: its metadata and its data sealed by the secret cipher (AES-256-GCM with a fresh data
 * key, the data key wrapped by the key provider; AAD `persys-secret:<name>:<version>`). Never holds
 * a value in plain text.
 */
export interface SecretRecord {
  readonly name: string;
  /** 1 at creation; +1 with each change of the data. */
  readonly version: number;
  /** The keys, sorted. */
  readonly keys: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The sealed data: the envelope as text, or base64 of the envelope bytes (`encoding`). */
  readonly envelope: string;
  readonly encoding: "text" | "base64";
}

/**
 * Records this process encoded lately, by their JSON text. Every write comes back to this process
 * once through the cache's watch; decoding it then hands back the record that was written instead
 * of parsing the text again (records are replaced, never changed in place, so sharing is safe).
 * Bounded: the oldest entries (writes that failed, or came back while another copy was pending)
 * are dropped first.
 */
const recentlyEncoded = new Map<string, object>();
const RECENTLY_ENCODED_LIMIT = 8192;

export const encodeRecord = (record: object): Uint8Array => {
  const text = jsonText(record);
  recentlyEncoded.set(text, record);
  if (recentlyEncoded.size > RECENTLY_ENCODED_LIMIT) {
    recentlyEncoded.delete(recentlyEncoded.keys().next().value as string);
  }
  return Buffer.from(text, "utf8");
};

/** The record in `bytes` (JSON): the one this process wrote when it encoded the same text lately. */
export const decodeRecord = <T>(bytes: Uint8Array): T => {
  const text = decodeText(bytes);
  const written = recentlyEncoded.get(text);
  if (written === undefined) return parseJsonText<T>(text);
  recentlyEncoded.delete(text);
  return written as T;
};

/** The workload of a record, decoded. */
export function workloadOf(record: WorkloadRecord): api.Workload {
  return api.Workload.fromJSON(record.workload);
}

export function diagnosisOf(json: unknown): api.PlacementDiagnosis | undefined {
  return json ? api.PlacementDiagnosis.fromJSON(json) : undefined;
}

export function reportOf(record: ReplicaStatusRecord): api.ReplicaReport {
  return api.ReplicaReport.fromJSON(record.report);
}

export function descriptionOf(record: NodeRecord): api.NodeDescription {
  return api.NodeDescription.fromJSON(record.description ?? {});
}

/** How many in-place reboots were asked for this replica (all replicas' plus its own). */
export function rebootGenerationOf(workload: WorkloadRecord, assignment: Pick<AssignmentRecord, "index">): number {
  return (workload.rebootNonce ?? 0) + (workload.replicaRebootNonces?.[String(assignment.index)] ?? 0);
}

/**
 * The revision id an agent is told to run: the spec revision, plus a restart counter once restarted
 * (`-r<all>.<one>`: recreate), plus `+b<n>` once rebooted (see `ReplicaAssignment.reboot_generation`:
 * a Persys agent reboots in place when only that suffix changed).
 */
export function agentRevisionOf(workload: WorkloadRecord, assignment: Pick<AssignmentRecord, "index">): string {
  const all = workload.restartNonce ?? 0;
  const one = workload.replicaRestartNonces?.[String(assignment.index)] ?? 0;
  const recreate = all + one > 0 ? `${workload.revision}-r${all}.${one}` : workload.revision;
  const reboots = rebootGenerationOf(workload, assignment);
  return reboots > 0 ? `${recreate}+b${reboots}` : recreate;
}

/** An agent revision's parts: what the runtime object is created from, and the reboots asked for. */
export function splitAgentRevision(agentRevision: string): { recreate: string; reboots: number } {
  const m = /^(.*)\+b(\d+)$/.exec(agentRevision);
  return m ? { recreate: m[1] ?? "", reboots: Number(m[2]) } : { recreate: agentRevision, reboots: 0 };
}
