import { api, invalid, PersysError } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import { descriptionOf, type NodeRecord } from "../cluster/records.js";
import type { SchedulingView } from "../scheduling/scheduling-view.js";
import { pageSize, pageToken, parseLabelSelector } from "../workloads/label-selector-query.js";
import type { NodeRegistry } from "./node-registry.js";
import type { UsageRecorder } from "./usage-recorder.js";

export interface NodeServiceOptions {
  readonly state: ClusterState;
  readonly registry: NodeRegistry;
  readonly usage: UsageRecorder;
  readonly view: SchedulingView;
}

/** The node half of the public API: views of registered nodes and operator actions on them. */
export class NodeService {
  constructor(private readonly o: NodeServiceOptions) {}

  /** The API view of a node record. */
  nodeView(record: NodeRecord): api.Node {
    const description = descriptionOf(record);
    const live = this.o.state.isLive(record.id);
    const reserved = this.o.view.snapshot.node(record.id) ? this.o.view.snapshot.reservedOn(record.id) : undefined;
    const usage = this.o.usage.latestOf(record.id);
    const state = record.lostAt
      ? api.NodeState.NODE_STATE_LOST
      : live
        ? api.NodeState.NODE_STATE_READY
        : api.NodeState.NODE_STATE_NOT_READY;
    return {
      id: record.id,
      labels: record.labels,
      state,
      cordoned: record.cordoned ?? false,
      draining: record.draining ?? false,
      cordonReason: record.cordonReason ?? "",
      capacity: description.capacity,
      allocatable: description.allocatable ?? description.capacity,
      allocated: reserved
        ? { cpuMillicores: reserved.cpuMillicores, memoryMib: reserved.memoryMiB, diskGib: reserved.diskGiB }
        : { cpuMillicores: 0, memoryMib: 0, diskGib: 0 },
      usage: usage
        ? { cpuMillicores: usage.cpuMillicores, memoryMib: usage.memoryMib, diskGib: usage.diskGib }
        : undefined,
      capabilities: description.capabilities,
      supportedKinds: description.supportedKinds,
      arch: description.arch,
      os: description.os,
      agentVersion: record.agentVersion,
      agentEndpoint: record.endpoint,
      replicaCount: this.o.state.assignmentsOn(record.id).length,
      conditions: description.conditions,
      registeredAt: new Date(record.registeredAt),
      ...(usage ? { lastHeartbeatAt: new Date(usage.at) } : {}),
    };
  }

  private record(nodeId: string): NodeRecord {
    if (!nodeId) throw invalid("INVALID_ARGUMENT", [{ path: "nodeId", reason: "is required" }]);
    const record = this.o.state.nodes.get(nodeId)?.value;
    if (!record) {
      throw new PersysError("NOT_FOUND", `node ${nodeId} not found`, {
        details: [{ path: "nodeId", reason: "no such node" }],
      });
    }
    return record;
  }

  list(request: api.ListNodesRequest): api.ListNodesResponse {
    const size = pageSize(request.pageSize);
    const after = pageToken.decode(request.pageToken);
    const matches = parseLabelSelector(request.labelSelector);
    const nodes: api.Node[] = [];
    for (const id of [...this.o.state.nodes.keys()].filter((id) => id > after).sort()) {
      const view = this.nodeView(this.o.state.nodes.get(id)!.value);
      if (request.state && view.state !== request.state) continue;
      if (request.capability && !view.capabilities.includes(request.capability)) continue;
      if (!matches(view.labels)) continue;
      if (nodes.length === size) return { nodes, nextPageToken: pageToken.encode(nodes.at(-1)!.id) };
      nodes.push(view);
    }
    return { nodes, nextPageToken: "" };
  }

  get(request: api.GetNodeRequest): api.GetNodeResponse {
    return { node: this.nodeView(this.record(request.nodeId)) };
  }

  async cordon(request: api.CordonNodeRequest): Promise<api.CordonNodeResponse> {
    this.record(request.nodeId);
    return { node: this.nodeView(await this.o.registry.cordon(request.nodeId, request.reason)) };
  }

  async uncordon(request: api.UncordonNodeRequest): Promise<api.UncordonNodeResponse> {
    this.record(request.nodeId);
    return { node: this.nodeView(await this.o.registry.uncordon(request.nodeId)) };
  }

  /** Drains a node: cordons it and moves its replicas elsewhere (dry run: only lists them). */
  async drain(request: api.DrainNodeRequest): Promise<api.DrainNodeResponse> {
    const record = this.record(request.nodeId);
    const evicted = this.o.state
      .assignmentsOn(request.nodeId)
      .map((a) => ({ workloadId: a.value.workloadId, replicaIndex: a.value.index }))
      .sort((a, b) =>
        a.workloadId === b.workloadId ? a.replicaIndex - b.replicaIndex : a.workloadId < b.workloadId ? -1 : 1,
      );
    if (request.dryRun) return { node: this.nodeView(record), evicted };
    return { node: this.nodeView(await this.o.registry.drain(request.nodeId, request.reason)), evicted };
  }
}
