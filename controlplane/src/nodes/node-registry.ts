import { api, type control, invalid, PersysError } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import type { EventRecorder } from "../cluster/event-recorder.js";
import { type ClusterKeys, replicaName } from "../cluster/keys.js";
import {
  descriptionOf,
  encodeRecord,
  type LivenessRecord,
  type NodeRecord,
  type ReplicaStatusRecord,
  reportOf,
  type StrayRecord,
} from "../cluster/records.js";
import type { StateStore, TxnOp } from "../state/state-store.js";
import { TxnBatcher } from "../state/txn-batcher.js";
import { reportFromGo, sameReplicaReport } from "./report-mapping.js";
import type { UsageRecorder } from "./usage-recorder.js";

export interface NodeRegistryOptions {
  readonly store: StateStore;
  readonly state: ClusterState;
  readonly keys: ClusterKeys;
  readonly events: EventRecorder;
  readonly usage: UsageRecorder;
  /** Seconds a node stays live without a heartbeat. */
  readonly leaseTtlSeconds: number;
  readonly clock?: () => number;
}

const nodeIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;
const endpointPattern = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;
const goKinds: Record<string, api.WorkloadKind> = {
  container: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  "docker-container": api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  docker: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  "docker-compose": api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: api.WorkloadKind.WORKLOAD_KIND_VM,
};

/** The node description from a registration: the Persys extension, or what a Go agent sends. */
function describe(request: control.RegisterNodeRequest): api.NodeDescription {
  if (request.persysNode) return request.persysNode;
  const caps = request.capabilities;
  const disk = (caps?.storagePools ?? []).reduce((sum, pool) => sum + pool.totalGb, 0);
  const capacity = { cpuMillicores: caps?.cpuTotalMillicores ?? 0, memoryMib: caps?.memoryTotalMb ?? 0, diskGib: disk };
  const kinds = (caps?.supportedWorkloadTypes ?? [])
    .map((t) => goKinds[t.toLowerCase()])
    .filter((k) => k !== undefined);
  return api.NodeDescription.fromPartial({
    capabilities: [],
    supportedKinds: kinds.length > 0 ? [...new Set(kinds)] : [api.WorkloadKind.WORKLOAD_KIND_CONTAINER],
    arch: request.labels.arch ?? "amd64",
    os: request.labels.os ?? "linux",
    capacity,
    allocatable: capacity,
  });
}

/**
 * Registration, heartbeats and operator state of nodes. Liveness is a store lease per node, kept
 * alive by heartbeats: when it expires the liveness key is deleted and the leader sees the node go
 * NotReady. Heartbeats write to the store only when something changed (a replica's state, a stray
 * copy), so steady state costs lease renewals, not writes; those writes group-commit, so a burst of
 * heartbeats shares transactions. A heartbeat is answered once its writes are durable. Any server
 * may handle them.
 */
export class NodeRegistry {
  private readonly clock: () => number;
  /** Serialises the heartbeats of one node (agents may send an extra one right after a change). */
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly decodedReports = new WeakMap<ReplicaStatusRecord, api.ReplicaReport>();
  /** Heartbeats' writes group-commit (no leader fence: any server handles heartbeats). */
  private readonly writes: TxnBatcher;

  constructor(private readonly o: NodeRegistryOptions) {
    this.clock = o.clock ?? Date.now;
    this.writes = new TxnBatcher(o.store, () => undefined);
  }

  /** Registers or re-registers a node (idempotent); cordon and drain marks are kept. */
  register(request: control.RegisterNodeRequest): Promise<control.RegisterNodeResponse> {
    return this.serial(request.nodeId, () => this.doRegister(request));
  }

  /** Renews the node's liveness and records what changed in its replicas. NOT_FOUND when unknown. */
  heartbeat(request: control.HeartbeatRequest): Promise<control.HeartbeatResponse> {
    return this.serial(request.nodeId, () => this.doHeartbeat(request));
  }

  private serial<T>(nodeId: string, run: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(nodeId) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(run);
    this.chains.set(nodeId, next);
    void next
      .finally(() => {
        if (this.chains.get(nodeId) === next) this.chains.delete(nodeId);
      })
      .catch(() => {});
    return next;
  }

  private async doRegister(request: control.RegisterNodeRequest): Promise<control.RegisterNodeResponse> {
    const violations: { path: string; reason: string }[] = [];
    if (!nodeIdPattern.test(request.nodeId)) {
      violations.push({ path: "node_id", reason: "must be 1-253 of [A-Za-z0-9._-], starting alphanumeric" });
    }
    const endpoint = endpointPattern.exec(request.grpcEndpoint);
    if (!endpoint || Number(endpoint[2]) < 1 || Number(endpoint[2]) > 65_535) {
      violations.push({ path: "grpc_endpoint", reason: "must be host:port of the agent's gRPC server" });
    }
    if (violations.length > 0) throw invalid("INVALID_ARGUMENT", violations, "node registration");

    const now = new Date(this.clock()).toISOString();
    const existing = this.o.state.nodes.get(request.nodeId)?.value;
    const record: NodeRecord = {
      id: request.nodeId,
      labels: request.labels,
      description: api.NodeDescription.toJSON(describe(request)),
      agentVersion: request.agentVersion,
      endpoint: request.grpcEndpoint,
      ...(request.clusterId ? { clusterId: request.clusterId } : {}),
      registeredAt: existing?.registeredAt ?? now,
      ...(existing?.cordoned ? { cordoned: true, cordonReason: existing.cordonReason ?? "" } : {}),
      ...(existing?.draining ? { draining: true } : {}),
    };
    const ops: TxnOp[] = [];
    if (!existing || JSON.stringify(withoutTimes(existing)) !== JSON.stringify(withoutTimes(record))) {
      ops.push({ type: "put", key: this.o.keys.node(request.nodeId), value: encodeRecord(record) });
    }
    const lease = await this.ensureLiveness(request.nodeId, ops);
    if (ops.length > 0) {
      // Answered once this server's view holds the node: the agent's first heartbeat follows at once,
      // and would find no node (NOT_FOUND, register again) while the watch still trails the write.
      const written = await this.o.store.txn({ success: ops });
      await this.o.state.waitFor(written.revision);
    }
    if (!existing) {
      void this.o.events.record({
        type: "NodeRegistered",
        nodeId: request.nodeId,
        message: `node ${request.nodeId} registered (${request.grpcEndpoint})`,
      });
    }
    return {
      accepted: true,
      reason: "",
      heartbeatIntervalSeconds: Math.max(1, Math.floor(this.o.leaseTtlSeconds / 3)),
      leaseExpiresAt: new Date(this.clock() + lease.ttl * 1000),
    };
  }

  /** Renews the node's lease, or grants a new one (adding the liveness put to `ops`) when it is gone. */
  private async ensureLiveness(nodeId: string, ops: TxnOp[]): Promise<{ ttl: number }> {
    const live = this.o.state.liveness.get(nodeId)?.value;
    if (live) {
      try {
        const renewed = await this.o.store.keepAliveOnce(live.lease);
        return { ttl: renewed.ttl };
      } catch (error) {
        if (!(error instanceof PersysError && error.code === "NOT_FOUND")) throw error;
      }
    }
    const grant = await this.o.store.grantLease(this.o.leaseTtlSeconds);
    const liveness: LivenessRecord = { nodeId, lease: grant.id, since: new Date(this.clock()).toISOString() };
    ops.push({ type: "put", key: this.o.keys.liveness(nodeId), value: encodeRecord(liveness), lease: grant.id });
    return { ttl: grant.ttl };
  }

  private async doHeartbeat(request: control.HeartbeatRequest): Promise<control.HeartbeatResponse> {
    const node = this.o.state.nodes.get(request.nodeId)?.value;
    if (!node) {
      throw new PersysError("NOT_FOUND", `node ${request.nodeId} is not registered: register it first`, {
        details: [{ path: "node_id", reason: "unknown node" }],
      });
    }
    const ops: TxnOp[] = [];
    const lease = await this.ensureLiveness(request.nodeId, ops);
    const now = this.clock();
    this.recordUsage(request, now);
    for (const report of this.reportsOf(request)) this.stageReport(request.nodeId, report, now, ops);
    // Group commit: heartbeats of many nodes share store transactions (one round trip and fsync).
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < ops.length; i += 100)
      writes.push(this.writes.submit({ compare: [], ops: ops.slice(i, i + 100) }));
    await Promise.all(writes);
    return {
      acknowledged: true,
      drainNode: node.draining ?? false,
      leaseExpiresAt: new Date(now + lease.ttl * 1000),
    };
  }

  /** Replica reports of a heartbeat: the Persys extension, else the Go statuses matched by name. */
  private reportsOf(request: control.HeartbeatRequest): api.ReplicaReport[] {
    if (request.persysReplicas.length > 0) return request.persysReplicas;
    const byName = new Map<string, { workloadId: string; index: number }>();
    for (const a of this.o.state.assignmentsOn(request.nodeId)) {
      byName.set(replicaName(a.value.workloadId, a.value.index), {
        workloadId: a.value.workloadId,
        index: a.value.index,
      });
    }
    return request.workloadStatuses.flatMap((status) => {
      const ref = byName.get(status.workloadId);
      return ref ? [reportFromGo(status, ref.workloadId, ref.index)] : [];
    });
  }

  private stageReport(nodeId: string, report: api.ReplicaReport, now: number, ops: TxnOp[]): void {
    const { workloadId, replicaIndex: index } = report;
    const held = this.o.state.assignment(workloadId, index);
    const assignment = held?.value;
    if (!assignment || assignment.nodeId !== nodeId) {
      if (report.state === api.ReplicaState.REPLICA_STATE_DELETING) return;
      const key = this.o.keys.stray(nodeId, workloadId, index);
      if (!this.o.state.strays.has(`${nodeId}/${workloadId}/${index}`)) {
        const stray: StrayRecord = {
          nodeId,
          workloadId,
          index,
          name: replicaName(workloadId, index),
          seenAt: new Date(now).toISOString(),
        };
        ops.push({ type: "put", key, value: encodeRecord(stray) });
      }
      return;
    }
    if (report.assignmentGeneration !== 0 && held && report.assignmentGeneration < held.createRevision) {
      // An older copy on the right node (e.g. re-placed back onto it): the leader re-applies; not a stray.
      return;
    }
    const current = this.o.state.status(workloadId, index)?.value;
    if (current && current.nodeId === nodeId && sameReplicaReport(this.storedReport(current), report)) return;
    const record: ReplicaStatusRecord = {
      nodeId,
      report: api.ReplicaReport.toJSON(report),
      ...(report.observedRevision ? { agentRevision: report.observedRevision } : {}),
      updatedAt: new Date(now).toISOString(),
    };
    ops.push({ type: "put", key: this.o.keys.status(workloadId, index), value: encodeRecord(record) });
  }

  /** The stored status's report, decoded once per stored record (records are replaced, never changed). */
  private storedReport(record: ReplicaStatusRecord): api.ReplicaReport {
    let report = this.decodedReports.get(record);
    if (!report) {
      report = reportOf(record);
      this.decodedReports.set(record, report);
    }
    return report;
  }

  private recordUsage(request: control.HeartbeatRequest, now: number): void {
    const usage = request.persysNode?.usage;
    const go = request.usage;
    if (usage || go) {
      this.o.usage.recordNode(request.nodeId, {
        at: now,
        cpuMillicores: usage?.cpuMillicores ?? go?.cpuUsedMillicores ?? 0,
        memoryMib: usage?.memoryMib ?? go?.memoryUsedMb ?? 0,
        diskGib: usage?.diskGib ?? go?.diskUsedGb ?? 0,
      });
    }
    for (const r of request.persysReplicas) {
      if (r.cpuMillicoresUsed > 0 || r.memoryBytesUsed > 0) {
        this.o.usage.recordReplica(r.workloadId, r.replicaIndex, now, r.cpuMillicoresUsed, r.memoryBytesUsed);
      }
    }
  }

  /** Marks a node unschedulable (it keeps its replicas). Idempotent. */
  async cordon(nodeId: string, reason: string): Promise<NodeRecord> {
    return this.updateNode(
      nodeId,
      (n) => ({ ...n, cordoned: true, cordonReason: reason }),
      "NodeCordoned",
      `cordoned: ${reason || "by operator"}`,
    );
  }

  /** Makes a node schedulable again and ends a drain. Idempotent. */
  async uncordon(nodeId: string): Promise<NodeRecord> {
    return this.updateNode(
      nodeId,
      ({ cordoned: _c, cordonReason: _r, draining: _d, ...rest }) => rest,
      "NodeUncordoned",
      "uncordoned",
    );
  }

  /** Cordons the node and asks the leader to move its replicas elsewhere. Idempotent. */
  async drain(nodeId: string, reason: string): Promise<NodeRecord> {
    return this.updateNode(
      nodeId,
      (n) => ({ ...n, cordoned: true, cordonReason: reason || "draining", draining: true }),
      "NodeDrained",
      `draining: ${reason || "by operator"}`,
    );
  }

  /** Writes a change to a node record with compare-and-swap, retrying on a concurrent change. */
  private async updateNode(
    nodeId: string,
    change: (node: NodeRecord) => NodeRecord,
    event: "NodeCordoned" | "NodeUncordoned" | "NodeDrained",
    message: string,
  ): Promise<NodeRecord> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const kv = await this.o.store.get(this.o.keys.node(nodeId));
      if (!kv)
        throw new PersysError("NOT_FOUND", `node ${nodeId} not found`, {
          details: [{ path: "nodeId", reason: "unknown node" }],
        });
      const before = JSON.parse(Buffer.from(kv.value).toString("utf8")) as NodeRecord;
      const after = change(before);
      if (JSON.stringify(after) === JSON.stringify(before)) return before;
      const result = await this.o.store.txn({
        compare: [{ key: kv.key, target: "modRevision", op: "=", value: kv.modRevision }],
        success: [{ type: "put", key: kv.key, value: encodeRecord(after) }],
      });
      if (result.succeeded) {
        await this.o.state.waitFor(result.revision);
        void this.o.events.record({ type: event, nodeId, message: `node ${nodeId} ${message}` });
        return after;
      }
    }
    throw new PersysError("CONFLICT", `node ${nodeId} changed concurrently too often; retry`);
  }

  /** A node's description (capacity, capabilities). */
  describe(node: NodeRecord): api.NodeDescription {
    return descriptionOf(node);
  }
}

function withoutTimes(record: NodeRecord): Omit<NodeRecord, "registeredAt"> {
  const { registeredAt: _r, ...rest } = record;
  return rest;
}
