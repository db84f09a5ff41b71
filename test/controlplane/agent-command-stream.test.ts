// The control plane's pushes over persys.command.v1 on real gRPC servers (127.0.0.1, free ports):
// AgentPool sends applies and deletes on one stream to an agent that serves it, answered as the
// unary calls would be (failures included, matched by id), falls back to the unary calls on an agent
// that does not (a Go compute-agent), and fails a stuck stream's commands with DEADLINE_EXCEEDED.
import {
  credentials,
  type handleUnaryCall,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { AgentCommandStreams, agent, command, NODE_ID_HEADER, PersysError } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { startAgentGrpcServer } from "../../agent/src/server/agent-grpc-server.js";
import { AgentPool } from "../../controlplane/src/reconciler/agent-pool.js";

interface Seen {
  method: string;
  path: string;
  nodeId: string;
  id: string;
}

/** An AgentService that records each call and answers like an agent; ids starting "bad" are refused, "hang" never answered. */
function recordingAgent(seen: Seen[]): agent.AgentServiceServer {
  const record = <Req extends { id: string }, Res>(
    method: string,
    answer: (req: Req) => Res,
  ): handleUnaryCall<Req, Res> =>
    ((call: ServerUnaryCall<Req, Res> & { getPath(): string }, callback: sendUnaryData<Res>) => {
      const nodeId = String(call.metadata.get(NODE_ID_HEADER)[0] ?? "");
      seen.push({ method, path: call.getPath(), nodeId, id: call.request.id });
      if (call.request.id.startsWith("hang")) return;
      if (call.request.id.startsWith("bad"))
        callback({ code: status.INVALID_ARGUMENT, details: "spec.image: required" });
      else callback(null, answer(call.request));
    }) as handleUnaryCall<Req, Res>;
  const unused = (_call: unknown, callback: sendUnaryData<never>) => callback({ code: status.UNIMPLEMENTED });
  return {
    applyWorkload: record("apply", (req: agent.ApplyWorkloadRequest) =>
      agent.ApplyWorkloadResponse.fromPartial({ applied: true, message: `applied ${req.id} rev ${req.revisionId}` }),
    ),
    deleteWorkload: record("delete", (req: agent.DeleteWorkloadRequest) =>
      agent.DeleteWorkloadResponse.fromPartial({ success: true, message: `deleted ${req.id}` }),
    ),
    getWorkloadStatus: unused,
    listWorkloads: unused,
    healthCheck: unused,
    listActions: unused,
  };
}

const servers: Server[] = [];
const pools: AgentPool[] = [];

async function listen(service: agent.AgentServiceServer, withStream: boolean): Promise<string> {
  const server = new Server();
  server.addService(agent.AgentServiceService, service);
  if (withStream) server.addService(command.AgentCommandServiceService, new AgentCommandStreams(service).handlers());
  const port = await new Promise<number>((ok, fail) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? fail(e) : ok(p))),
  );
  servers.push(server);
  return `127.0.0.1:${port}`;
}

function pool(callTimeoutMs = 5_000): AgentPool {
  const p = new AgentPool({ callTimeoutMs });
  pools.push(p);
  return p;
}

/** The PersysError `pending` rejects with (fails the test when it resolves). */
const failureOf = (pending: Promise<unknown>): Promise<PersysError> =>
  pending.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => {
      if (!(error instanceof PersysError)) throw error;
      return error;
    },
  );

const applyRequest = (id: string) =>
  agent.ApplyWorkloadRequest.fromPartial({
    id,
    revisionId: "r1",
    desiredState: agent.DesiredState.DESIRED_STATE_RUNNING,
  });

afterEach(() => {
  for (const p of pools.splice(0)) p.close();
  for (const s of servers.splice(0)) s.forceShutdown();
});

describe("AgentPool over persys.command.v1", () => {
  it("sends applies and deletes on the stream, with the node id, answered as the unary calls", async () => {
    const seen: Seen[] = [];
    const endpoint = await listen(recordingAgent(seen), true);
    const agents = pool();
    const answers = await Promise.all([
      agents.apply(endpoint, "node-a", applyRequest("web-0")),
      agents.apply(endpoint, "node-b", applyRequest("web-1")),
      agents.delete(endpoint, "node-a", "old-0"),
    ]);
    expect(answers.map((a) => a.message)).toEqual(["applied web-0 rev r1", "applied web-1 rev r1", "deleted old-0"]);
    expect(seen).toEqual([
      { method: "apply", path: "/persys.command.v1.AgentCommandService/StreamCommands", nodeId: "node-a", id: "web-0" },
      { method: "apply", path: "/persys.command.v1.AgentCommandService/StreamCommands", nodeId: "node-b", id: "web-1" },
      {
        method: "delete",
        path: "/persys.command.v1.AgentCommandService/StreamCommands",
        nodeId: "node-a",
        id: "old-0",
      },
    ]);
  });

  it("answers a refused command with the unary call's error and keeps the stream for the next", async () => {
    const seen: Seen[] = [];
    const endpoint = await listen(recordingAgent(seen), true);
    const agents = pool();
    const refused = await failureOf(agents.apply(endpoint, "node-a", applyRequest("bad-0")));
    expect(refused.code).toBe("INVALID_SPEC");
    expect(refused.message).toContain("agent of node node-a rejected the spec: spec.image: required");
    expect((await agents.apply(endpoint, "node-a", applyRequest("web-0"))).applied).toBe(true);
    expect(seen.map((s) => s.path)).toEqual([
      "/persys.command.v1.AgentCommandService/StreamCommands",
      "/persys.command.v1.AgentCommandService/StreamCommands",
    ]);
  });

  it("falls back to unary AgentService calls where the stream is not served (a Go compute-agent)", async () => {
    const seen: Seen[] = [];
    const endpoint = await listen(recordingAgent(seen), false);
    const agents = pool();
    expect((await agents.apply(endpoint, "node-a", applyRequest("web-0"))).message).toBe("applied web-0 rev r1");
    expect((await agents.delete(endpoint, "node-a", "web-0")).success).toBe(true);
    const refused = await failureOf(agents.apply(endpoint, "node-a", applyRequest("bad-0")));
    expect(refused.code).toBe("INVALID_SPEC");
    expect(seen.map((s) => [s.path, s.nodeId])).toEqual([
      ["/persys.agent.v1.AgentService/ApplyWorkload", "node-a"],
      ["/persys.agent.v1.AgentService/DeleteWorkload", "node-a"],
      ["/persys.agent.v1.AgentService/ApplyWorkload", "node-a"],
    ]);
  });

  it("fails the commands of a stuck stream with DEADLINE_EXCEEDED, then sends on a new stream", async () => {
    const seen: Seen[] = [];
    const endpoint = await listen(recordingAgent(seen), true);
    const agents = pool(300);
    const started = Date.now();
    const stuck = await failureOf(agents.apply(endpoint, "node-a", applyRequest("hang-0")));
    expect(stuck.code).toBe("DEADLINE_EXCEEDED");
    expect(stuck.message).toBe("agent of node node-a did not answer in time");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await agents.apply(endpoint, "node-a", applyRequest("web-0"))).applied).toBe(true);
  });

  it("answers a command without a command case INVALID_ARGUMENT naming the field, and runs nothing", async () => {
    const seen: Seen[] = [];
    const endpoint = await listen(recordingAgent(seen), true);
    const client = new command.AgentCommandServiceClient(endpoint, credentials.createInsecure());
    const stream = client.streamCommands(new Metadata());
    stream.on("error", (error: { code?: number }) => {
      if (error.code !== status.CANCELLED) throw error; // cancelled below, once answered
    });
    const answer = new Promise<command.StreamCommandsResponse>((resolve) => stream.once("data", resolve));
    stream.write({ id: 7, nodeId: "node-a" });
    const response = await answer;
    stream.cancel();
    client.close();
    expect(response).toEqual({
      id: 7,
      result: { $case: "failure", value: { code: status.INVALID_ARGUMENT, message: "command: required" } },
    });
    expect(seen).toEqual([]);
  });

  it("an agent shutting down ends the open command stream at once instead of waiting out its grace", async () => {
    const seen: Seen[] = [];
    const server = await startAgentGrpcServer({
      address: "127.0.0.1:0",
      agentService: recordingAgent(seen),
      nodeLogService: { streamReplicaLogs: (call) => call.end() },
    });
    const endpoint = `127.0.0.1:${server.port}`;
    const agents = pool();
    expect((await agents.apply(endpoint, "node-a", applyRequest("web-0"))).applied).toBe(true);
    expect(seen[0]?.path).toBe("/persys.command.v1.AgentCommandService/StreamCommands");
    const started = Date.now();
    await server.close(20_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    const after = await failureOf(agents.apply(endpoint, "node-a", applyRequest("web-1")));
    expect(after.code).toBe("UNAVAILABLE");
  });
});
