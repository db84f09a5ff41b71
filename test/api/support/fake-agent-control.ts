// An in-memory AgentControlApi holding the objects behind the recorded Go gateway responses
// (fixtures/go-gateway), so the compat routes can be compared with what the Go gateway wrote.
import { control, PersysError } from "@persys/schema";
import type { AgentControlApi, CallContext } from "../../../controlplane/src/api/persys-api.js";

const at = (iso: string) => new Date(iso);

export const workloadViews: control.WorkloadView[] = [
  control.WorkloadView.fromPartial({
    workloadId: "web",
    type: "container",
    desiredState: "Running",
    status: "Running",
    assignedNodeId: "node-1",
    revisionId: "r1",
    retryMaxAttempts: 5,
    lastUpdated: at("2025-01-02T03:04:05.000Z"),
    usage: {
      workloadId: "web",
      type: "container",
      cpuPercent: 12.5,
      memoryBytes: 134217728,
      netRxBytes: 2048,
      collectedAt: at("2025-01-02T03:04:05.120Z"),
      source: "docker",
    },
  }),
  control.WorkloadView.fromPartial({
    workloadId: "db",
    type: "vm",
    desiredState: "Running",
    status: "Failed",
    assignedNodeId: "node-2",
    revisionId: "r7",
    retryAttempts: 3,
    retryMaxAttempts: 5,
    retryNextAt: at("2025-01-02T03:10:00.000Z"),
    failureReason: "VM_BOOT_FAILED",
    lastUpdated: at("2025-01-02T03:05:00.000Z"),
    reason: {
      code: "VM_BOOT_FAILED",
      message: "guest did not reach the network within 120s",
      lastTransition: at("2025-01-02T03:05:00.000Z"),
      nextRetryAt: at("2025-01-02T03:10:00.000Z"),
      retryable: true,
    },
  }),
];

export const nodeViews: control.NodeView[] = [
  control.NodeView.fromPartial({
    nodeId: "node-1",
    status: "Ready",
    lastHeartbeat: at("2025-01-02T03:04:00.000Z"),
    grpcEndpoint: "10.0.0.11:50051",
    totalCpuCores: 4,
    availableCpuCores: 2.5,
    totalMemoryMb: 8192,
    availableMemoryMb: 4096,
    supportedWorkloadTypes: ["container", "compose", "vm"],
    labels: { zone: "eu-1a", node_pool: "general", diskType: "ssd" },
  }),
  control.NodeView.fromPartial({
    nodeId: "node-2",
    status: "NotReady",
    statusReason: "heartbeat timeout",
    statusUpdatedBy: "scheduler",
    statusUpdatedAt: at("2025-01-02T03:06:00.000Z"),
    lastHeartbeat: at("2025-01-02T03:05:30.000Z"),
    grpcEndpoint: "10.0.0.12:50051",
    totalCpuCores: 8,
    totalMemoryMb: 16384,
    supportedWorkloadTypes: ["vm"],
  }),
];

export class FakeAgentControl implements AgentControlApi {
  readonly calls: { method: string; request: unknown; ctx: CallContext }[] = [];

  private enter(method: string, request: unknown, ctx: CallContext): void {
    this.calls.push({ method, request, ctx });
  }

  lastRequest(method: string): unknown {
    return this.calls.filter((c) => c.method === method).at(-1)?.request;
  }

  async registerNode(request: control.RegisterNodeRequest, ctx: CallContext): Promise<control.RegisterNodeResponse> {
    this.enter("registerNode", request, ctx);
    return { accepted: true, reason: "", heartbeatIntervalSeconds: 10, leaseExpiresAt: at("2025-01-02T03:05:00.000Z") };
  }

  async heartbeat(request: control.HeartbeatRequest, ctx: CallContext): Promise<control.HeartbeatResponse> {
    this.enter("heartbeat", request, ctx);
    if (request.nodeId === "unknown-node") throw new PersysError("NOT_FOUND", "node unknown-node is not registered");
    return { acknowledged: true, drainNode: request.nodeId === "draining-node" };
  }

  async applyWorkload(request: control.ApplyWorkloadRequest, ctx: CallContext): Promise<control.ApplyWorkloadResponse> {
    this.enter("applyWorkload", request, ctx);
    if (request.workloadId === "bad-image") {
      return {
        success: false,
        failureReason: control.FailureReason.IMAGE_PULL_FAILED,
        errorMessage: "pull access denied for nosuch/image",
      };
    }
    if (!request.workloadId) throw new PersysError("INVALID_SPEC", "workload_id is required");
    return { success: true, failureReason: control.FailureReason.FAILURE_REASON_UNSPECIFIED, errorMessage: "" };
  }

  async deleteWorkload(
    request: control.DeleteWorkloadRequest,
    ctx: CallContext,
  ): Promise<control.DeleteWorkloadResponse> {
    this.enter("deleteWorkload", request, ctx);
    this.view(request.workloadId);
    return { success: true, errorMessage: "" };
  }

  async retryWorkload(request: control.RetryWorkloadRequest, ctx: CallContext): Promise<control.RetryWorkloadResponse> {
    this.enter("retryWorkload", request, ctx);
    this.view(request.workloadId);
    return { accepted: true };
  }

  async submitAutomationSuggestion(
    request: control.SubmitAutomationSuggestionRequest,
    ctx: CallContext,
  ): Promise<control.SubmitAutomationSuggestionResponse> {
    this.enter("submitAutomationSuggestion", request, ctx);
    return { accepted: false, decision: "rejected", reason: "automation is disabled", appliedAction: "" };
  }

  async listNodes(request: control.ListNodesRequest, ctx: CallContext): Promise<control.ListNodesResponse> {
    this.enter("listNodes", request, ctx);
    const status = request.status.toLowerCase();
    return { nodes: nodeViews.filter((n) => !status || n.status.toLowerCase() === status) };
  }

  async getNode(request: control.GetNodeRequest, ctx: CallContext): Promise<control.GetNodeResponse> {
    this.enter("getNode", request, ctx);
    const node = nodeViews.find((n) => n.nodeId === request.nodeId);
    if (!node) throw new PersysError("NOT_FOUND", `node ${request.nodeId} not found`);
    return { node };
  }

  async listWorkloads(request: control.ListWorkloadsRequest, ctx: CallContext): Promise<control.ListWorkloadsResponse> {
    this.enter("listWorkloads", request, ctx);
    const status = request.status.toLowerCase();
    return {
      workloads: workloadViews.filter(
        (w) =>
          (!status || w.status.toLowerCase() === status) && (!request.nodeId || w.assignedNodeId === request.nodeId),
      ),
    };
  }

  async getWorkload(request: control.GetWorkloadRequest, ctx: CallContext): Promise<control.GetWorkloadResponse> {
    this.enter("getWorkload", request, ctx);
    return { workload: this.view(request.workloadId) };
  }

  async getClusterSummary(
    request: control.GetClusterSummaryRequest,
    ctx: CallContext,
  ): Promise<control.GetClusterSummaryResponse> {
    this.enter("getClusterSummary", request, ctx);
    return {
      totalNodes: 2,
      readyNodes: 1,
      notReadyNodes: 1,
      totalWorkloads: 2,
      runningWorkloads: 1,
      pendingWorkloads: 0,
      failedWorkloads: 1,
      deletedWorkloads: 0,
      generatedAt: at("2025-01-02T03:06:30.000Z"),
    };
  }

  private view(id: string): control.WorkloadView {
    const found = workloadViews.find((w) => w.workloadId === id);
    if (!found) throw new PersysError("NOT_FOUND", `workload ${id} not found`);
    return found;
  }
}
