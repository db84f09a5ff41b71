import { api, control, invalid, PersysError } from "@persys/schema";
import type { AgentControlApi, CallContext } from "../api/persys-api.js";
import type { NodeRegistry } from "../nodes/node-registry.js";
import type { NodeService } from "../nodes/node-service.js";
import { failureReasonToGo, stateToGo } from "../nodes/report-mapping.js";
import type { WorkloadService } from "../workloads/workload-service.js";
import { desiredFromGo, desiredToGo, kindToGo, workloadFromControl } from "./control-workload-mapping.js";

const goStatus: Record<number, string> = {
  [api.WorkloadState.WORKLOAD_STATE_PENDING]: "Pending",
  [api.WorkloadState.WORKLOAD_STATE_PROGRESSING]: "Pending",
  [api.WorkloadState.WORKLOAD_STATE_RUNNING]: "Running",
  [api.WorkloadState.WORKLOAD_STATE_DEGRADED]: "Running",
  [api.WorkloadState.WORKLOAD_STATE_STOPPED]: "Stopped",
  [api.WorkloadState.WORKLOAD_STATE_FAILED]: "Failed",
  [api.WorkloadState.WORKLOAD_STATE_DELETING]: "Deleting",
};

function workloadToView(w: api.Workload): control.WorkloadView {
  const replica = w.status?.replicas[0];
  const failing = w.status?.replicas.find(
    (r) => r.state === api.ReplicaState.REPLICA_STATE_FAILED || r.state === api.ReplicaState.REPLICA_STATE_PENDING,
  );
  const reason = (failing ?? replica)?.reason;
  return control.WorkloadView.fromPartial({
    workloadId: w.id,
    type: kindToGo(w.kind),
    desiredState: desiredToGo(w.desiredState),
    status: goStatus[w.status?.state ?? 0] ?? (replica ? stateToGo(replica.state) : "Unknown"),
    assignedNodeId: replica?.nodeId ?? "",
    revisionId: w.status?.revision ?? "",
    retryAttempts: reason?.attempts ?? 0,
    retryMaxAttempts: 0,
    ...(reason?.nextRetryAt ? { retryNextAt: reason.nextRetryAt } : {}),
    failureReason: reason && reason.code !== api.ErrorCode.ERROR_CODE_UNSPECIFIED ? reason.message : "",
    ...(w.status?.updatedAt ? { lastUpdated: w.status.updatedAt } : {}),
    ...(reason
      ? {
          reason: {
            code: api.errorCodeToJSON(reason.code),
            message: reason.message,
            retryable: reason.retryable,
            ...(reason.nextRetryAt ? { nextRetryAt: reason.nextRetryAt } : {}),
          },
        }
      : {}),
  });
}

/**
 * `persys.control.v1.AgentControl` on top of the public API's services, so the Go compute-agent
 * registers and heartbeats here and the Go persysctl and gateway drive workloads. Go semantics are
 * kept where peers rely on them (ApplyWorkload answers failures in-band) and fixed where they were
 * bugs (list filters by node, scale suggestions work, NOT_FOUND is a status, not a crash).
 */
export class AgentControlService implements AgentControlApi {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly workloads: WorkloadService,
    private readonly nodes: NodeService,
  ) {}

  registerNode(request: control.RegisterNodeRequest, _ctx: CallContext) {
    return this.registry.register(request);
  }

  heartbeat(request: control.HeartbeatRequest, _ctx: CallContext) {
    return this.registry.heartbeat(request);
  }

  async applyWorkload(
    request: control.ApplyWorkloadRequest,
    _ctx: CallContext,
  ): Promise<control.ApplyWorkloadResponse> {
    try {
      if (!request.workloadId) throw invalid("INVALID_SPEC", [{ path: "workload_id", reason: "is required" }]);
      if (!request.spec) {
        const stop = desiredFromGo(request.desiredState) === api.DesiredState.DESIRED_STATE_STOPPED;
        if (stop) await this.workloads.stop({ workloadId: request.workloadId });
        else await this.workloads.start({ workloadId: request.workloadId });
      } else {
        await this.workloads.apply({ workload: workloadFromControl(request) });
      }
      return { success: true, failureReason: control.FailureReason.FAILURE_REASON_UNSPECIFIED, errorMessage: "" };
    } catch (error) {
      if (!(error instanceof PersysError)) throw error;
      return {
        success: false,
        failureReason: failureReasonToGo(api.errorCodeFromJSON(error.code)),
        errorMessage: error.message,
      };
    }
  }

  async deleteWorkload(
    request: control.DeleteWorkloadRequest,
    _ctx: CallContext,
  ): Promise<control.DeleteWorkloadResponse> {
    try {
      await this.workloads.delete({ workloadId: request.workloadId, allowMissing: false });
      return { success: true, errorMessage: "" };
    } catch (error) {
      if (!(error instanceof PersysError) || error.code === "INTERNAL") throw error;
      return { success: false, errorMessage: error.message };
    }
  }

  async retryWorkload(
    request: control.RetryWorkloadRequest,
    _ctx: CallContext,
  ): Promise<control.RetryWorkloadResponse> {
    await this.workloads.retry({ workloadId: request.workloadId });
    return { accepted: true };
  }

  async submitAutomationSuggestion(
    request: control.SubmitAutomationSuggestionRequest,
    _ctx: CallContext,
  ): Promise<control.SubmitAutomationSuggestionResponse> {
    const s = request.suggestion;
    const decided = (accepted: boolean, applied: string, reason: string) => ({
      accepted,
      decision: accepted ? "accepted" : "rejected",
      reason,
      appliedAction: applied,
      decidedAt: new Date(),
    });
    if (!s?.targetWorkload) return decided(false, "", "suggestion.target_workload is required");
    try {
      switch (s.actionType) {
        case control.AutomationActionType.AUTOMATION_ACTION_SET_DESIRED_STATE:
          if (/^delete(d)?$/i.test(s.desiredState))
            await this.workloads.delete({ workloadId: s.targetWorkload, allowMissing: true });
          else if (desiredFromGo(s.desiredState) === api.DesiredState.DESIRED_STATE_STOPPED)
            await this.workloads.stop({ workloadId: s.targetWorkload });
          else await this.workloads.start({ workloadId: s.targetWorkload });
          return decided(true, `set_desired_state:${s.desiredState || "Running"}`, s.reason);
        case control.AutomationActionType.AUTOMATION_ACTION_RETRY_WORKLOAD:
          await this.workloads.retry({ workloadId: s.targetWorkload });
          return decided(true, "retry_workload", s.reason);
        case control.AutomationActionType.AUTOMATION_ACTION_DELETE_WORKLOAD:
          await this.workloads.delete({ workloadId: s.targetWorkload, allowMissing: true });
          return decided(true, "delete_workload", s.reason);
        case control.AutomationActionType.AUTOMATION_ACTION_SCALE_REPLICAS: {
          const current = this.workloads.get({
            workloadId: s.targetWorkload,
            view: api.WorkloadView.WORKLOAD_VIEW_BASIC,
          }).workload!;
          const target = s.desiredReplicas > 0 ? s.desiredReplicas : (current.replicas ?? 1) + s.replicaDelta;
          if (target < 0) return decided(false, "", `scaling to ${target} replicas is not possible`);
          await this.workloads.apply({ workload: { ...current, replicas: target, status: undefined } });
          return decided(true, `scale_replicas:${target}`, s.reason);
        }
        default:
          return decided(false, "", "unknown action_type");
      }
    } catch (error) {
      if (!(error instanceof PersysError)) throw error;
      return decided(false, "", error.message);
    }
  }

  async listNodes(request: control.ListNodesRequest, _ctx: CallContext): Promise<control.ListNodesResponse> {
    const all = this.nodes.list(api.ListNodesRequest.fromPartial({ pageSize: 1000 })).nodes.map((n) => nodeToView(n));
    const wanted = request.status.trim().toLowerCase();
    return { nodes: wanted ? all.filter((n) => n.status.toLowerCase() === wanted) : all };
  }

  async getNode(request: control.GetNodeRequest, _ctx: CallContext): Promise<control.GetNodeResponse> {
    return { node: nodeToView(this.nodes.get({ nodeId: request.nodeId }).node!) };
  }

  async listWorkloads(
    request: control.ListWorkloadsRequest,
    _ctx: CallContext,
  ): Promise<control.ListWorkloadsResponse> {
    const views: control.WorkloadView[] = [];
    let pageToken = "";
    do {
      const page = this.workloads.list(
        api.ListWorkloadsRequest.fromPartial({ nodeId: request.nodeId, pageSize: 1000, pageToken }),
      );
      views.push(...page.workloads.map(workloadToView));
      pageToken = page.nextPageToken;
    } while (pageToken);
    const wanted = request.status.trim().toLowerCase();
    return { workloads: wanted ? views.filter((v) => v.status.toLowerCase() === wanted) : views };
  }

  async getWorkload(request: control.GetWorkloadRequest, _ctx: CallContext): Promise<control.GetWorkloadResponse> {
    return {
      workload: workloadToView(
        this.workloads.get({ workloadId: request.workloadId, view: api.WorkloadView.WORKLOAD_VIEW_BASIC }).workload!,
      ),
    };
  }

  async getClusterSummary(
    _request: control.GetClusterSummaryRequest,
    ctx: CallContext,
  ): Promise<control.GetClusterSummaryResponse> {
    const nodes = await this.listNodes({ status: "" }, ctx);
    const workloads = await this.listWorkloads({ nodeId: "", status: "" }, ctx);
    const count = (status: string) => workloads.workloads.filter((w) => w.status === status).length;
    return {
      totalNodes: nodes.nodes.length,
      readyNodes: nodes.nodes.filter((n) => n.status === "Ready").length,
      notReadyNodes: nodes.nodes.filter((n) => n.status !== "Ready").length,
      totalWorkloads: workloads.workloads.length,
      runningWorkloads: count("Running"),
      pendingWorkloads: count("Pending"),
      failedWorkloads: count("Failed"),
      deletedWorkloads: count("Deleting"),
      generatedAt: new Date(),
    };
  }
}

function nodeToView(node: api.Node): control.NodeView {
  const free = (total: number, used: number) => Math.max(0, total - used);
  return control.NodeView.fromPartial({
    nodeId: node.id,
    status: node.state === api.NodeState.NODE_STATE_READY ? "Ready" : "NotReady",
    statusReason: node.cordoned
      ? `cordoned: ${node.cordonReason}`
      : node.state === api.NodeState.NODE_STATE_LOST
        ? "lost"
        : "",
    statusUpdatedBy: "persys",
    ...(node.lastHeartbeatAt ? { lastHeartbeat: node.lastHeartbeatAt } : {}),
    grpcEndpoint: node.agentEndpoint,
    totalCpuCores: (node.allocatable?.cpuMillicores ?? 0) / 1000,
    availableCpuCores: free(node.allocatable?.cpuMillicores ?? 0, node.allocated?.cpuMillicores ?? 0) / 1000,
    totalMemoryMb: node.allocatable?.memoryMib ?? 0,
    availableMemoryMb: free(node.allocatable?.memoryMib ?? 0, node.allocated?.memoryMib ?? 0),
    supportedWorkloadTypes: node.supportedKinds.map(kindToGo),
    labels: node.labels,
  });
}
