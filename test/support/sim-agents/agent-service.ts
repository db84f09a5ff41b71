/**
 * gRPC wiring of simulated agents: an `AgentService` implementation that resolves each call to one
 * node's `NodeAgent`, and servers that host one node (faithful) or many nodes behind one port
 * (routed by the `persys-node-id` metadata header).
 */
import {
  status as grpcStatus,
  type handleUnaryCall,
  type Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import { AgentCommandStreams, agent, command, NODE_ID_HEADER } from "@persys/schema";
import { AgentCallError, type NodeAgent } from "./node-agent.js";

/**
 * The metadata header that names the target node on a shared endpoint. The control plane's agent
 * client must send it on every AgentService call (`persys-node-id: <node id>`); a per-node endpoint
 * ignores it, a shared one answers INVALID_ARGUMENT without it and UNAVAILABLE for a node that is
 * unknown or stopped (as a dead agent would be unreachable).
 */
export const nodeIdHeader = NODE_ID_HEADER;

/** Finds the node a call is for, or throws an `AgentCallError`. */
export type NodeResolver = (metadata: Metadata) => NodeAgent;

function unary<Req, Res>(resolve: NodeResolver, run: (node: NodeAgent, req: Req) => Res): handleUnaryCall<Req, Res> {
  return (call: ServerUnaryCall<Req, Res>, callback) => {
    try {
      callback(null, run(resolve(call.metadata), call.request));
    } catch (error) {
      if (error instanceof AgentCallError) callback({ code: error.code, details: error.message });
      else callback({ code: grpcStatus.INTERNAL, details: error instanceof Error ? error.message : String(error) });
    }
  };
}

/** An AgentService implementation over the node the resolver picks for each call. */
export function agentServiceImplementation(resolve: NodeResolver): agent.AgentServiceServer {
  return {
    applyWorkload: unary(resolve, (n, req: agent.ApplyWorkloadRequest) => n.applyWorkload(req)),
    deleteWorkload: unary(resolve, (n, req: agent.DeleteWorkloadRequest) => n.deleteWorkload(req)),
    getWorkloadStatus: unary(resolve, (n, req: agent.GetWorkloadStatusRequest) => n.getWorkloadStatus(req)),
    listWorkloads: unary(resolve, (n, req: agent.ListWorkloadsRequest) => n.listWorkloads(req)),
    healthCheck: unary(resolve, (n) => n.healthCheck()),
    listActions: unary(resolve, (n, req: agent.ListActionsRequest) => n.listActions(req)),
  };
}

/** A started gRPC server and the `host:port` it listens on. */
export interface ListeningServer {
  readonly server: Server;
  readonly endpoint: string;
  readonly port: number;
}

/**
 * Starts a gRPC server with the AgentService, and the same calls over `persys.command.v1` streams
 * (as a Persys agent serves them), on `host:port` (port 0: any free port). The server is built for
 * many concurrent streams (simulated fleets share one).
 */
export async function listenAgentService(
  resolve: NodeResolver,
  options: { host?: string; port?: number; credentials?: ServerCredentials } = {},
): Promise<ListeningServer> {
  const host = options.host ?? "127.0.0.1";
  const server = new Server({ "grpc.max_concurrent_streams": 100_000 });
  const service = agentServiceImplementation(resolve);
  server.addService(agent.AgentServiceService, service);
  server.addService(command.AgentCommandServiceService, new AgentCommandStreams(service).handlers());
  const port = await new Promise<number>((ok, fail) =>
    server.bindAsync(
      `${host}:${options.port ?? 0}`,
      options.credentials ?? ServerCredentials.createInsecure(),
      (e, p) => (e ? fail(e) : ok(p)),
    ),
  );
  return { server, endpoint: `${host}:${port}`, port };
}

/** Stops a server now, cancelling calls in flight (what a dead node looks like to its callers). */
export function killServer(server: Server): void {
  server.forceShutdown();
}

/**
 * Routes calls on one shared server to many nodes by the `persys-node-id` header. Nodes attach
 * while they are up and detach when stopped.
 */
export class NodeRouter {
  private readonly nodes = new Map<string, NodeAgent>();

  /** Makes the node reachable. */
  attach(nodeId: string, node: NodeAgent): void {
    this.nodes.set(nodeId, node);
  }

  /** Makes the node unreachable (calls answer UNAVAILABLE). */
  detach(nodeId: string): void {
    this.nodes.delete(nodeId);
  }

  /** The resolver for `listenAgentService`. */
  readonly resolve: NodeResolver = (metadata) => {
    const value = metadata.get(nodeIdHeader)[0];
    if (value === undefined || value === "") {
      throw new AgentCallError(
        grpcStatus.INVALID_ARGUMENT,
        `this endpoint serves many simulated nodes: send the ${nodeIdHeader} metadata header`,
      );
    }
    const id = typeof value === "string" ? value : value.toString("utf8");
    const node = this.nodes.get(id);
    if (!node)
      throw new AgentCallError(grpcStatus.UNAVAILABLE, `simulated node ${id} is not reachable on this endpoint`);
    return node;
  };
}
