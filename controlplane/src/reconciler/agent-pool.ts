import { type ChannelCredentials, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { agent, api, NODE_ID_HEADER, PersysError } from "@persys/schema";
import { type AgentCommand, AgentCommandChannel, type CommandCallback } from "./agent-command-channel.js";

export { NODE_ID_HEADER };

export interface AgentPoolOptions {
  /** Deadline of one call. */
  readonly callTimeoutMs?: number;
  readonly credentials?: ChannelCredentials;
}

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/**
 * Clients for nodes' `persys.agent.v1.AgentService`, one pooled channel per endpoint, reused by
 * every call (the Go original dialled a new connection per call). Applies and deletes go over the
 * agent's `persys.command.v1` stream where it has one (Persys agents), as unary calls where it has
 * not (Go agents); either way with the same answers. Errors become PersysErrors:
 * an unreachable node is UNAVAILABLE (retryable), NOT_FOUND stays NOT_FOUND.
 */
export class AgentPool {
  private readonly clients = new Map<string, agent.AgentServiceClient>();
  private readonly commandChannels = new Map<string, AgentCommandChannel>();
  private readonly logClients = new Map<string, api.NodeLogServiceClient>();
  private readonly timeoutMs: number;
  private readonly creds: ChannelCredentials;

  constructor(options: AgentPoolOptions = {}) {
    this.timeoutMs = options.callTimeoutMs ?? 10_000;
    this.creds = options.credentials ?? credentials.createInsecure();
  }

  private client(endpoint: string): agent.AgentServiceClient {
    let client = this.clients.get(endpoint);
    if (!client) {
      client = new agent.AgentServiceClient(endpoint, this.creds, {
        "grpc.keepalive_time_ms": 30_000,
        "grpc.max_reconnect_backoff_ms": 5_000,
      });
      this.clients.set(endpoint, client);
    }
    return client;
  }

  private commands(endpoint: string): AgentCommandChannel {
    let channel = this.commandChannels.get(endpoint);
    if (!channel) {
      const client = this.client(endpoint);
      channel = new AgentCommandChannel(client, (nodeId, cmd, timeoutMs, callback) =>
        unaryCommand(client, nodeId, cmd, timeoutMs, callback),
      );
      this.commandChannels.set(endpoint, channel);
    }
    return channel;
  }

  private command<Res>(endpoint: string, nodeId: string, cmd: AgentCommand): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.commands(endpoint).send(nodeId, cmd, this.timeoutMs, (error, response) => {
        if (error) reject(toPersysError(error, nodeId));
        else resolve(response as Res);
      });
    });
  }

  private call<Req, Res>(
    endpoint: string,
    nodeId: string,
    method: (client: agent.AgentServiceClient) => Unary<Req, Res>,
    request: Req,
    timeoutMs = this.timeoutMs,
  ): Promise<Res> {
    const client = this.client(endpoint);
    return new Promise<Res>((resolve, reject) => {
      callUnary(client, method(client), nodeId, request, timeoutMs, (error, response) => {
        if (error) reject(toPersysError(error, nodeId));
        else resolve(response);
      });
    });
  }

  apply(endpoint: string, nodeId: string, request: agent.ApplyWorkloadRequest): Promise<agent.ApplyWorkloadResponse> {
    return this.command(endpoint, nodeId, { $case: "applyWorkload", value: request });
  }

  delete(endpoint: string, nodeId: string, id: string): Promise<agent.DeleteWorkloadResponse> {
    return this.command(endpoint, nodeId, { $case: "deleteWorkload", value: { id } });
  }

  status(endpoint: string, nodeId: string, id: string): Promise<agent.GetWorkloadStatusResponse> {
    return this.call(endpoint, nodeId, (c) => c.getWorkloadStatus, { id });
  }

  list(endpoint: string, nodeId: string): Promise<agent.ListWorkloadsResponse> {
    return this.call(endpoint, nodeId, (c) => c.listWorkloads, { type: agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED });
  }

  /**
   * Streams one replica's log lines from the node's `persys.api.v1.NodeLogService` (batches are
   * flattened, each line keeps the replica index and node id the agent set). Ends when the agent ends
   * the stream; aborting `signal` cancels the call. Errors are PersysErrors like the unary calls'
   * (a Go agent, which has no log service, answers UNIMPLEMENTED: RUNTIME_ERROR).
   */
  async *logs(
    endpoint: string,
    nodeId: string,
    request: api.StreamReplicaLogsRequest,
    signal: AbortSignal,
  ): AsyncIterable<api.StreamWorkloadLogsResponse> {
    let client = this.logClients.get(endpoint);
    if (!client) {
      client = new api.NodeLogServiceClient(endpoint, this.creds, { "grpc.keepalive_time_ms": 30_000 });
      this.logClients.set(endpoint, client);
    }
    const metadata = new Metadata();
    metadata.set(NODE_ID_HEADER, nodeId);
    const call = client.streamReplicaLogs(request, metadata);
    const cancel = () => call.cancel();
    signal.addEventListener("abort", cancel, { once: true });
    try {
      for await (const message of call as AsyncIterable<api.StreamReplicaLogsResponse>) yield* message.lines;
    } catch (error) {
      if (signal.aborted) return;
      throw toPersysError(error as ServiceError, nodeId);
    } finally {
      signal.removeEventListener("abort", cancel);
      call.cancel();
    }
  }

  /** Closes every channel. */
  close(): void {
    for (const channel of this.commandChannels.values()) channel.close();
    this.commandChannels.clear();
    for (const client of this.clients.values()) client.close();
    for (const client of this.logClients.values()) client.close();
    this.clients.clear();
    this.logClients.clear();
  }

  get size(): number {
    return this.clients.size;
  }
}

/** One unary AgentService call with the node id header and a deadline `timeoutMs` from now. */
function callUnary<Req, Res>(
  client: agent.AgentServiceClient,
  method: Unary<Req, Res>,
  nodeId: string,
  request: Req,
  timeoutMs: number,
  callback: (error: ServiceError | null, response: Res) => void,
): void {
  const metadata = new Metadata();
  metadata.set(NODE_ID_HEADER, nodeId);
  method.call(client, request, metadata, { deadline: new Date(Date.now() + timeoutMs) }, callback);
}

function unaryCommand(
  client: agent.AgentServiceClient,
  nodeId: string,
  cmd: AgentCommand,
  timeoutMs: number,
  callback: CommandCallback,
): void {
  if (cmd.$case === "applyWorkload") callUnary(client, client.applyWorkload, nodeId, cmd.value, timeoutMs, callback);
  else callUnary(client, client.deleteWorkload, nodeId, cmd.value, timeoutMs, callback);
}

function toPersysError(error: ServiceError, nodeId: string): PersysError {
  const where = `agent of node ${nodeId}`;
  switch (error.code) {
    case status.NOT_FOUND:
      return new PersysError("NOT_FOUND", `${where}: ${error.details || error.message}`, { cause: error });
    case status.UNAVAILABLE:
      return new PersysError("UNAVAILABLE", `${where} is unreachable: ${error.details || error.message}`, {
        cause: error,
      });
    case status.DEADLINE_EXCEEDED:
      return new PersysError("DEADLINE_EXCEEDED", `${where} did not answer in time`, { cause: error });
    case status.INVALID_ARGUMENT:
      return new PersysError("INVALID_SPEC", `${where} rejected the spec: ${error.details}`, { cause: error });
    default:
      return new PersysError("RUNTIME_ERROR", `${where}: ${error.details || error.message}`, {
        cause: error,
        retryable: true,
      });
  }
}
