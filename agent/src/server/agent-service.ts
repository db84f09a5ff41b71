import type { handleUnaryCall, Metadata, ServerUnaryCall } from "@grpc/grpc-js";
import { agent, NODE_ID_HEADER, PersysError, toGrpcStatus } from "@persys/schema";
import type { HostUsage } from "../host/host-resources.js";
import type { ActionLog } from "../replicas/action-log.js";
import type { ReplicaManager } from "../replicas/replica-manager.js";

export { NODE_ID_HEADER };

export interface AgentServiceParts {
  readonly nodeId: string;
  readonly version: string;
  readonly replicas: ReplicaManager;
  readonly actions: ActionLog;
  /** "healthy" or "unhealthy: <cause>" per runtime. */
  readonly runtimeStatus: () => Record<string, string>;
  readonly hostUsage: () => HostUsage;
}

/**
 * Refuses a call meant for another node: a control plane that reached this endpoint with a
 * `persys-node-id` of a different node has a stale address (another agent took the port).
 */
export function checkNode(metadata: Metadata, nodeId: string): void {
  const value = metadata.get(NODE_ID_HEADER)[0];
  const target = value === undefined ? "" : typeof value === "string" ? value : value.toString("utf8");
  if (target && target !== nodeId) {
    throw new PersysError(
      "UNAVAILABLE",
      `this agent serves node ${nodeId}, not ${target}: the node's address is stale`,
    );
  }
}

function unary<Req, Res>(nodeId: string, run: (request: Req) => Res): handleUnaryCall<Req, Res> {
  return (call: ServerUnaryCall<Req, Res>, callback) => {
    try {
      checkNode(call.metadata, nodeId);
      callback(null, run(call.request));
    } catch (error) {
      const e = error instanceof PersysError ? error : new PersysError("INTERNAL", String(error));
      callback(toGrpcStatus(e));
    }
  };
}

/**
 * `persys.agent.v1.AgentService` over the replica manager, as a Go scheduler or the Persys control
 * plane drives it. Every answer is immediate: apply validates and records the replica, then answers
 * with its current status (STARTING) while the runtime works; bad input is `applied=false` with the
 * reason (never a gRPC error, as in the Go agent). GetWorkloadStatus of an unknown id is NOT_FOUND
 * ("status not found ...", the text Go schedulers match).
 */
export function agentServiceImplementation(p: AgentServiceParts): agent.AgentServiceServer {
  return {
    applyWorkload: unary(p.nodeId, (req: agent.ApplyWorkloadRequest) => p.replicas.apply(req)),
    deleteWorkload: unary(p.nodeId, (req: agent.DeleteWorkloadRequest) => p.replicas.delete(req.id)),
    getWorkloadStatus: unary(p.nodeId, (req: agent.GetWorkloadStatusRequest) => {
      const status = p.replicas.status(req.id);
      if (!status) throw new PersysError("NOT_FOUND", `status not found for workload ${req.id}`);
      return { status };
    }),
    listWorkloads: unary(p.nodeId, (req: agent.ListWorkloadsRequest) => ({
      workloads:
        req.type === agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED ||
        req.type === agent.WorkloadType.WORKLOAD_TYPE_CONTAINER
          ? p.replicas.list()
          : [],
    })),
    healthCheck: unary(p.nodeId, () => {
      const usage = p.hostUsage();
      return {
        healthy: true,
        version: p.version,
        runtimeStatus: p.runtimeStatus(),
        memoryUtilization: usage.memoryPercent,
        cpuUtilization: usage.cpuPercent,
        diskUtilization: usage.diskPercent,
      };
    }),
    listActions: unary(p.nodeId, (req: agent.ListActionsRequest) => ({ actions: p.actions.list(req) })),
  };
}
