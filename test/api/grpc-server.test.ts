// The gRPC transport on a real server (127.0.0.1, free port) over the fake core: mapping of
// requests and responses, errors with the persys-error-bin trailer, streams and cancellation,
// deadlines, AgentControl with its unimplemented ControlStream, the heartbeat stream (and the agents'
// HeartbeatChannel falling back to unary where it is not served), health checking and reflection.
import { createRequire } from "node:module";
import { join } from "node:path";
import {
  type Client,
  credentials,
  loadPackageDefinition,
  Metadata,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { api, control, HeartbeatChannel, heartbeat, PersysError } from "@persys/schema";
import { service as healthService } from "grpc-health-check";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PERSYS_ERROR_TRAILER, persysErrorFromServiceError } from "../../controlplane/src/api/errors/index.js";
import { type RunningGrpcServer, startGrpcServer } from "../../controlplane/src/api/grpc/index.js";
import { ApiMetrics } from "../../controlplane/src/api/metrics.js";
import { FakeAgentControl } from "./support/fake-agent-control.js";
import { FakeHealth, FakePersysApi, sampleNode, sampleWorkload } from "./support/fake-persys-api.js";

let server: RunningGrpcServer;
let core: FakePersysApi;
let agentControl: FakeAgentControl;
let health: FakeHealth;
let metrics: ApiMetrics;
const logged: unknown[] = [];
let target: string;
const clients: Client[] = [];

function client<T extends Client>(
  Ctor: new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => T,
): T {
  const c = new Ctor(target, credentials.createInsecure());
  clients.push(c);
  return c;
}

/** Promise form of a unary call: resolves with the response or rejects with the ServiceError. */
function unary<Req, Res>(
  fn: (
    req: Req,
    metadata: Metadata,
    options: { deadline?: Date },
    cb: (e: ServiceError | null, r: Res) => void,
  ) => unknown,
  request: Req,
  options: { deadline?: Date } = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn(request, new Metadata(), options, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

beforeAll(async () => {
  core = new FakePersysApi();
  agentControl = new FakeAgentControl();
  health = new FakeHealth();
  metrics = new ApiMetrics();
  const logger = pino({ level: "error" }, { write: (line: string) => logged.push(JSON.parse(line)) });
  server = await startGrpcServer({
    address: "127.0.0.1:0",
    api: core,
    agentControl,
    health,
    logger,
    metrics,
    healthIntervalMs: 20,
  });
  target = `127.0.0.1:${server.port}`;
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server.close(100);
});

beforeEach(() => {
  core.workloads.clear();
  core.nodes.clear();
  core.workloads.set("web", sampleWorkload("web"));
  core.nodes.set("node-1", sampleNode("node-1"));
});

describe("unary calls map requests and responses", () => {
  it("applies a workload and reads it back", async () => {
    const workloads = client(api.WorkloadServiceClient);
    const applied = await unary(workloads.applyWorkload.bind(workloads), { workload: sampleWorkload("api") });
    expect(applied.created).toBe(true);
    expect(core.lastCall("applyWorkload")?.request).toEqual({ workload: sampleWorkload("api") });
    const read = await unary(workloads.getWorkload.bind(workloads), {
      workloadId: "api",
      view: api.WorkloadView.WORKLOAD_VIEW_FULL,
    });
    expect(read.workload?.spec).toEqual(sampleWorkload("api").spec);
    expect(read.workload?.status?.revision).toBe(applied.workload?.status?.revision);
  });

  it("passes proto3 optional fields through (unset vs 0)", async () => {
    const workloads = client(api.WorkloadServiceClient);
    await unary(workloads.retryWorkload.bind(workloads), { workloadId: "web", replicaIndex: 0 });
    expect(core.lastCall("retryWorkload")?.request).toEqual({ workloadId: "web", replicaIndex: 0 });
    await unary(workloads.retryWorkload.bind(workloads), { workloadId: "web" });
    expect((core.lastCall("retryWorkload")!.request as api.RetryWorkloadRequest).replicaIndex).toBeUndefined();
  });

  it("serves NodeService, ClusterService and EventService", async () => {
    const nodes = client(api.NodeServiceClient);
    const node = await unary(nodes.getNode.bind(nodes), { nodeId: "node-1" });
    expect(node.node?.capabilities).toEqual(["docker", "kvm"]);
    const cluster = client(api.ClusterServiceClient);
    const summary = await unary(cluster.getClusterSummary.bind(cluster), {});
    expect(summary.summary?.leaderId).toBe("cp-1");
    const events = client(api.EventServiceClient);
    await unary(events.listEvents.bind(events), api.ListEventsRequest.fromPartial({ pageSize: 10 }));
    expect(core.lastCall("listEvents")?.request).toEqual(api.ListEventsRequest.fromPartial({ pageSize: 10 }));
  });

  it("gives the core a request id (the client's x-request-id when sent)", async () => {
    const workloads = client(api.WorkloadServiceClient);
    const metadata = new Metadata();
    metadata.set("x-request-id", "req-42");
    await new Promise((resolve, reject) =>
      workloads.getWorkload({ workloadId: "web", view: 0 }, metadata, (e, r) => (e ? reject(e) : resolve(r))),
    );
    expect(core.lastCall("getWorkload")?.ctx.requestId).toBe("req-42");
  });
});

describe("errors", () => {
  it("sends a PersysError as the registry status, the message, and the whole error in persys-error-bin", async () => {
    const workloads = client(api.WorkloadServiceClient);
    const error = await unary(workloads.getWorkload.bind(workloads), { workloadId: "missing", view: 0 }).catch(
      (e: ServiceError) => e,
    );
    expect((error as ServiceError).code).toBe(status.NOT_FOUND);
    expect((error as ServiceError).details).toBe('workload "missing" not found');
    const trailer = (error as ServiceError).metadata.get(PERSYS_ERROR_TRAILER)[0];
    expect(api.Error.decode(trailer as Buffer)).toEqual({
      code: api.ErrorCode.NOT_FOUND,
      message: 'workload "missing" not found',
      details: [],
      retryable: false,
    });
  });

  it.each([
    {
      code: "INVALID_SPEC",
      grpc: status.INVALID_ARGUMENT,
      details: [{ path: "workload.container.image", reason: "is required" }],
    },
    { code: "CONFLICT", grpc: status.ABORTED, details: [] },
    { code: "UNSCHEDULABLE", grpc: status.FAILED_PRECONDITION, details: [] },
    { code: "UNAVAILABLE", grpc: status.UNAVAILABLE, details: [] },
  ] as const)("round-trips $code through the client helper", async ({ code, grpc, details }) => {
    core.failNext("applyWorkload", new PersysError(code, `failed with ${code}`, { details }));
    const workloads = client(api.WorkloadServiceClient);
    const error = (await unary(workloads.applyWorkload.bind(workloads), { workload: sampleWorkload() }).catch(
      (e) => e,
    )) as ServiceError;
    expect(error.code).toBe(grpc);
    const back = persysErrorFromServiceError(error);
    expect(back).toBeInstanceOf(PersysError);
    expect(back.toBody()).toEqual(new PersysError(code, `failed with ${code}`, { details }).toBody());
  });

  it("turns an unexpected error into INTERNAL without leaking its text, and logs it", async () => {
    core.failNext("listWorkloads", new Error("connection string postgres://admin:hunter2@db"));
    const workloads = client(api.WorkloadServiceClient);
    const error = (await unary(workloads.listWorkloads.bind(workloads), api.ListWorkloadsRequest.fromPartial({})).catch(
      (e) => e,
    )) as ServiceError;
    expect(error.code).toBe(status.INTERNAL);
    expect(error.details).toMatch(/^internal error \(request id [-0-9a-f]+\)/);
    expect(error.details).not.toContain("hunter2");
    expect(persysErrorFromServiceError(error).code).toBe("INTERNAL");
    expect(JSON.stringify(logged)).toContain("hunter2");
  });

  it("derives a code from the status when no trailer came (e.g. nothing listens)", async () => {
    const dead = new api.NodeServiceClient("127.0.0.1:1", credentials.createInsecure());
    clients.push(dead);
    const error = (await unary(
      dead.getNode.bind(dead),
      { nodeId: "x" },
      { deadline: new Date(Date.now() + 2000) },
    ).catch((e) => e)) as ServiceError;
    expect(["UNAVAILABLE", "DEADLINE_EXCEEDED"]).toContain(persysErrorFromServiceError(error).code);
  });
});

describe("server streams", () => {
  it("streams a watch and stops the core's stream when the client cancels", async () => {
    core.events.length = 0;
    core.events.push(
      api.Event.fromPartial({ id: "e1", type: "workload.applied" }),
      api.Event.fromPartial({ id: "e2", type: "replica.placed" }),
    );
    const events = client(api.EventServiceClient);
    const call = events.watchEvents({ afterEventId: "e1" });
    const received: string[] = [];
    await new Promise<void>((resolve) => {
      call.on("data", (item: api.WatchEventsResponse) => {
        received.push(item.event?.id ?? "");
        if (received.length === 1)
          core.liveEvents.publish(api.Event.fromPartial({ id: "e3", type: "replica.running" }));
        if (received.length === 2) resolve();
      });
    });
    expect(received).toEqual(["e2", "e3"]);
    expect(core.liveEvents.listeners).toBe(1);
    call.on("error", () => {});
    call.cancel();
    const ctx = core.lastCall("watchEvents")!.ctx;
    await expect.poll(() => ctx.signal.aborted).toBe(true);
    await expect.poll(() => core.liveEvents.listeners).toBe(0);
  });

  it("ends a stream that fails with the error's status and trailer", async () => {
    core.compactedThrough = 50;
    const workloads = client(api.WorkloadServiceClient);
    const call = workloads.watchWorkloads(api.WatchWorkloadsRequest.fromPartial({ afterStoreRevision: 10 }));
    const error = await new Promise<ServiceError>((resolve) => {
      call.on("data", () => {});
      call.on("error", resolve);
    });
    expect(error.code).toBe(status.OUT_OF_RANGE);
    expect(persysErrorFromServiceError(error).code).toBe("COMPACTED");
  });

  it("aborts the core's signal when the deadline passes", async () => {
    core.logLines = [api.StreamWorkloadLogsResponse.fromPartial({ line: "hello" })];
    const workloads = client(api.WorkloadServiceClient);
    const call = workloads.streamWorkloadLogs(
      api.StreamWorkloadLogsRequest.fromPartial({ workloadId: "web", follow: true }),
      {
        deadline: new Date(Date.now() + 300),
      },
    );
    const lines: string[] = [];
    const error = await new Promise<ServiceError>((resolve) => {
      call.on("data", (item: api.StreamWorkloadLogsResponse) => lines.push(item.line));
      call.on("error", resolve);
    });
    expect(lines).toEqual(["hello"]);
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    const ctx = core.lastCall("streamWorkloadLogs")!.ctx;
    await expect.poll(() => ctx.signal.aborted).toBe(true);
    await expect.poll(() => core.liveLogs.listeners).toBe(0);
  });
});

describe("persys.control.v1.AgentControl", () => {
  it("serves the Go contract's unary RPCs", async () => {
    const agentClient = client(control.AgentControlClient);
    const response = await unary(
      agentClient.registerNode.bind(agentClient),
      control.RegisterNodeRequest.fromPartial({ nodeId: "node-9", grpcEndpoint: "10.0.0.9:50051" }),
    );
    expect(response).toEqual({
      accepted: true,
      reason: "",
      heartbeatIntervalSeconds: 10,
      leaseExpiresAt: new Date("2025-01-02T03:05:00.000Z"),
    });
    const nodes = await unary(agentClient.listNodes.bind(agentClient), { status: "ready" });
    expect(nodes.nodes.map((n) => n.nodeId)).toEqual(["node-1"]);
  });

  it("answers ControlStream with UNIMPLEMENTED, as the Go scheduler does", async () => {
    const agentClient = client(control.AgentControlClient);
    const stream = agentClient.controlStream();
    const error = await new Promise<ServiceError>((resolve) => {
      stream.on("data", () => {});
      stream.on("error", resolve);
      stream.write(control.ControlMessage.fromPartial({ message: { $case: "heartbeat", value: { nodeId: "n" } } }));
      stream.end();
    });
    expect(error.code).toBe(status.UNIMPLEMENTED);
    expect(error.details).toBe("method ControlStream not implemented");
  });
});

describe("persys.heartbeat.v1.HeartbeatService", () => {
  /** One heartbeat through the channel, as a promise of its answer (rejects with the status). */
  const beat = (channel: HeartbeatChannel, nodeId: string) =>
    new Promise<control.HeartbeatResponse>((resolve, reject) =>
      channel.send(control.HeartbeatRequest.fromPartial({ nodeId }), (error, response) =>
        error ? reject(error) : resolve(response!),
      ),
    );

  it("answers each heartbeat on one stream as the unary call would, and counts each one", async () => {
    const channel = new HeartbeatChannel(client(control.AgentControlClient), { timeoutMs: 5000 });
    const before = agentControl.calls.filter((c) => c.method === "heartbeat").length;
    const answers = [
      await beat(channel, "node-1"),
      await beat(channel, "draining-node"),
      await beat(channel, "node-1"),
    ];
    channel.close();
    expect(channel.streaming).toBe(true);
    expect(answers.map((a) => [a.acknowledged, a.drainNode])).toEqual([
      [true, false],
      [true, true],
      [true, false],
    ]);
    const calls = agentControl.calls.filter((c) => c.method === "heartbeat").slice(before);
    expect(calls.map((c) => (c.request as control.HeartbeatRequest).nodeId)).toEqual([
      "node-1",
      "draining-node",
      "node-1",
    ]);
    // One stream, one call context: the same request id for all three.
    expect(new Set(calls.map((c) => c.ctx.requestId)).size).toBe(1);
    const text = (await metrics.exposition()).body;
    expect(text).toMatch(
      /persys_grpc_server_handled_total\{grpc_service="persys\.heartbeat\.v1\.HeartbeatService",grpc_method="StreamHeartbeats",grpc_type="bidi_stream",grpc_code="OK"\} [3-9]/,
    );
  });

  it("ends the stream with the heartbeat's failure status (NOT_FOUND), then opens a new one", async () => {
    const channel = new HeartbeatChannel(client(control.AgentControlClient), { timeoutMs: 5000 });
    await beat(channel, "node-1");
    const failure = await beat(channel, "unknown-node").catch((e: ServiceError) => e);
    expect((failure as ServiceError).code).toBe(status.NOT_FOUND);
    expect(persysErrorFromServiceError(failure as ServiceError).message).toContain("unknown-node is not registered");
    expect((await beat(channel, "node-1")).acknowledged).toBe(true);
    channel.close();
  });

  it("falls back to unary AgentControl.Heartbeat where the stream is not served (a Go scheduler)", async () => {
    const goLike = new Server();
    const seen: string[] = [];
    goLike.addService(control.AgentControlService, {
      heartbeat: (
        call: { request: control.HeartbeatRequest },
        done: (e: null, r: control.HeartbeatResponse) => void,
      ) => {
        seen.push(call.request.nodeId);
        done(null, { acknowledged: true, drainNode: false });
      },
    } as never);
    const port = await new Promise<number>((resolve, reject) =>
      goLike.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    const agentClient = new control.AgentControlClient(`127.0.0.1:${port}`, credentials.createInsecure());
    clients.push(agentClient);
    const channel = new HeartbeatChannel(agentClient, { timeoutMs: 5000 });
    expect((await beat(channel, "n1")).acknowledged).toBe(true);
    expect(channel.streaming).toBe(false);
    expect((await beat(channel, "n2")).acknowledged).toBe(true);
    expect(seen).toEqual(["n1", "n2"]);
    goLike.forceShutdown();
  });

  it("fails a heartbeat nobody answers with DEADLINE_EXCEEDED", async () => {
    // A server that takes the stream and never answers.
    const silent = new Server();
    silent.addService(heartbeat.HeartbeatServiceService, { streamHeartbeats: () => {} } as never);
    const port = await new Promise<number>((resolve, reject) =>
      silent.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    const agentClient = new control.AgentControlClient(`127.0.0.1:${port}`, credentials.createInsecure());
    clients.push(agentClient);
    const channel = new HeartbeatChannel(agentClient, { timeoutMs: 200 });
    const failure = await beat(channel, "n1").catch((e: ServiceError) => e);
    expect((failure as ServiceError).code).toBe(status.DEADLINE_EXCEEDED);
    silent.forceShutdown();
  });

  it("ends open heartbeat streams when the server shuts down, without waiting out the grace period", async () => {
    const own = new FakeAgentControl();
    const other = await startGrpcServer({ address: "127.0.0.1:0", agentControl: own, health: new FakeHealth() });
    const agentClient = new control.AgentControlClient(`127.0.0.1:${other.port}`, credentials.createInsecure());
    clients.push(agentClient);
    const channel = new HeartbeatChannel(agentClient, { timeoutMs: 5000 });
    await beat(channel, "node-1");
    const started = Date.now();
    await other.close(10_000);
    expect(Date.now() - started).toBeLessThan(2000);
    const after = await beat(channel, "node-1").catch((e: ServiceError) => e);
    expect((after as ServiceError).code).toBe(status.UNAVAILABLE);
  });
});

describe("health checking", () => {
  const Health = makeGenericClientConstructor(healthService, "Health");
  const check = (service: string) =>
    new Promise<string>((resolve, reject) => {
      const c = new Health(target, credentials.createInsecure()) as unknown as Client & {
        Check(request: unknown, callback: (e: ServiceError | null, r: { status: string }) => void): void;
      };
      clients.push(c);
      c.Check({ service }, (e: ServiceError | null, r: { status: string }) => (e ? reject(e) : resolve(r.status)));
    });

  it.each(["", "persys.api.v1.WorkloadService", "persys.control.v1.AgentControl"])(
    "follows readiness for %j",
    async (service) => {
      health.readiness = { ready: true };
      server.health.refresh();
      expect(await check(service)).toBe("SERVING");
      health.readiness = { ready: false, reason: "etcd unreachable" };
      await expect.poll(() => check(service)).toBe("NOT_SERVING");
      health.readiness = { ready: true };
      await expect.poll(() => check(service)).toBe("SERVING");
    },
  );
});

describe("server reflection", () => {
  const reflectionDir = join(
    createRequire(import.meta.url)
      .resolve("@grpc/reflection")
      .replace(/build[/\\]src[/\\]index\.js$/, ""),
    "build",
    "proto",
  );
  const definition = loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [reflectionDir], keepCase: true });
  const ServerReflection = (
    loadPackageDefinition(definition) as unknown as {
      grpc: {
        reflection: {
          v1: {
            ServerReflection: new (t: string, c: unknown) => Client & Record<string, () => NodeJS.ReadWriteStream>;
          };
        };
      };
    }
  ).grpc.reflection.v1.ServerReflection;

  const ask = (request: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const c = new ServerReflection(target, credentials.createInsecure());
      clients.push(c);
      const call = c.ServerReflectionInfo!() as unknown as NodeJS.EventEmitter & {
        write(x: unknown): void;
        end(): void;
      };
      call.on("data", resolve);
      call.on("error", reject);
      call.write(request);
      call.end();
    });

  it("lists every Persys service", async () => {
    const answer = (await ask({ list_services: "" })) as { list_services_response: { service: { name: string }[] } };
    expect(answer.list_services_response.service.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        "persys.api.v1.WorkloadService",
        "persys.api.v1.NodeService",
        "persys.api.v1.ClusterService",
        "persys.api.v1.EventService",
        "persys.control.v1.AgentControl",
        "persys.heartbeat.v1.HeartbeatService",
        "grpc.health.v1.Health",
      ]),
    );
  });

  it("describes a message by symbol", async () => {
    const answer = (await ask({ file_containing_symbol: "persys.api.v1.Workload" })) as {
      file_descriptor_response?: { file_descriptor_proto: Buffer[] };
    };
    expect(answer.file_descriptor_response?.file_descriptor_proto.length).toBeGreaterThan(0);
  });
});

describe("metrics", () => {
  it("counts calls per method and status code", async () => {
    const workloads = client(api.WorkloadServiceClient);
    await unary(workloads.getWorkload.bind(workloads), { workloadId: "missing", view: 0 }).catch(() => {});
    const text = (await metrics.exposition()).body;
    expect(text).toMatch(
      /persys_grpc_server_handled_total\{grpc_service="persys\.api\.v1\.WorkloadService",grpc_method="GetWorkload",grpc_type="unary",grpc_code="NOT_FOUND"\} [1-9]/,
    );
    expect(text).toContain(
      'persys_grpc_server_handling_seconds_bucket{le="0.001",grpc_service="persys.api.v1.WorkloadService"',
    );
  });
});

describe("shutdown", () => {
  it("cancels open streams after the grace period and stops the core's stream", async () => {
    const own = new FakePersysApi();
    const other = await startGrpcServer({ address: "127.0.0.1:0", api: own, health: new FakeHealth() });
    const watcher = new api.EventServiceClient(`127.0.0.1:${other.port}`, credentials.createInsecure());
    clients.push(watcher);
    const call = watcher.watchEvents({ afterEventId: "" });
    const ended = new Promise<ServiceError>((resolve) => {
      call.on("data", () => {});
      call.on("error", resolve);
    });
    await expect.poll(() => own.liveEvents.listeners).toBe(1);
    const started = Date.now();
    await other.close(200);
    expect([status.CANCELLED, status.UNAVAILABLE]).toContain((await ended).code);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => own.lastCall("watchEvents")!.ctx.signal.aborted).toBe(true);
  });
});
