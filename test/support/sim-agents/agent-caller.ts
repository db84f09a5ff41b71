/**
 * A promise-based `persys.agent.v1.AgentService` client for tests, playing the control plane's part:
 * a real grpc-js channel that sends the `persys-node-id` header when given a node id.
 */
import { type ChannelCredentials, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { agent } from "@persys/schema";
import { nodeIdHeader } from "./agent-service.js";

type Unary<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, res: Res) => void,
) => unknown;

/** Promise-returning AgentService calls. */
export interface AgentCaller {
  apply(req: Partial<agent.ApplyWorkloadRequest>): Promise<agent.ApplyWorkloadResponse>;
  delete(id: string): Promise<agent.DeleteWorkloadResponse>;
  status(id: string): Promise<agent.GetWorkloadStatusResponse>;
  list(type?: agent.WorkloadType): Promise<agent.ListWorkloadsResponse>;
  health(): Promise<agent.HealthCheckResponse>;
  actions(req?: Partial<agent.ListActionsRequest>): Promise<agent.ListActionsResponse>;
  /** A caller on the same channel that names another node in `persys-node-id`. */
  forNode(nodeId: string): AgentCaller;
  /** Closes the channel (for every caller sharing it). */
  close(): void;
}

/**
 * Connects to an agent endpoint. With `nodeId`, every call carries `persys-node-id: <nodeId>` (needed
 * on a shared fleet endpoint; ignored by a node's own endpoint).
 */
export function connectAgent(
  endpoint: string,
  options: { nodeId?: string; credentials?: ChannelCredentials; timeoutMs?: number } = {},
): AgentCaller {
  const client = new agent.AgentServiceClient(endpoint, options.credentials ?? credentials.createInsecure());
  return callerOn(client, options.nodeId, options.timeoutMs ?? 5000);
}

function callerOn(client: agent.AgentServiceClient, nodeId: string | undefined, timeoutMs: number): AgentCaller {
  const call = <Req, Res>(method: Unary<Req, Res>, req: Req): Promise<Res> =>
    new Promise((resolve, reject) => {
      const metadata = new Metadata();
      if (nodeId !== undefined) metadata.set(nodeIdHeader, nodeId);
      method.call(client, req, metadata, { deadline: Date.now() + timeoutMs }, (e, res) =>
        e ? reject(e) : resolve(res),
      );
    });
  return {
    apply: (req) =>
      call(
        client.applyWorkload as Unary<agent.ApplyWorkloadRequest, agent.ApplyWorkloadResponse>,
        agent.ApplyWorkloadRequest.fromPartial(req),
      ),
    delete: (id) =>
      call(client.deleteWorkload as Unary<agent.DeleteWorkloadRequest, agent.DeleteWorkloadResponse>, { id }),
    status: (id) =>
      call(client.getWorkloadStatus as Unary<agent.GetWorkloadStatusRequest, agent.GetWorkloadStatusResponse>, { id }),
    list: (type = agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED) =>
      call(client.listWorkloads as Unary<agent.ListWorkloadsRequest, agent.ListWorkloadsResponse>, { type }),
    health: () => call(client.healthCheck as Unary<agent.HealthCheckRequest, agent.HealthCheckResponse>, {}),
    actions: (req = {}) =>
      call(
        client.listActions as Unary<agent.ListActionsRequest, agent.ListActionsResponse>,
        agent.ListActionsRequest.fromPartial(req),
      ),
    forNode: (other) => callerOn(client, other, timeoutMs),
    close: () => client.close(),
  };
}
