// One simulated node against a fake AgentControl (a real gRPC server) and a real AgentService client:
// registration, ApplyWorkload semantics and the read RPCs, as a control plane sees them on the wire.
import { status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { agent, api, control } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { assignmentRequest } from "./apply-request.js";
import { FakeAgentControl } from "./fake-agent-control.js";
import { description, reported, useHarness } from "./node-harness.js";
import { SimulatedNode } from "./simulated-node.js";
import { waitUntil } from "./wait.js";

const { harness, cleanups } = useHarness();

describe("registration", () => {
  it("carries the Go fields and the persys_node extension", async () => {
    const { fake, node } = await harness();
    const reg = fake.registrationsOf("node-a")[0]!;
    expect(reg).toMatchObject({
      nodeId: "node-a",
      capabilities: {
        cpuTotalMillicores: 8000,
        memoryTotalMb: 16384,
        supportedWorkloadTypes: ["container", "compose", "vm"],
        storagePools: [{ name: "root", type: "dir", totalGb: 200 }],
      },
      labels: { "topology.persys.io/zone": "zone-a" },
      grpcEndpoint: node.endpoint,
      persysNode: {
        capabilities: ["kvm"],
        supportedKinds: [
          api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
          api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
          api.WorkloadKind.WORKLOAD_KIND_VM,
        ],
        arch: "arm64",
        os: "linux",
        capacity: { cpuMillicores: 8000, memoryMib: 16384, diskGib: 200 },
        allocatable: { cpuMillicores: 7750, memoryMib: 15360, diskGib: 190 },
      },
    });
    expect(reg.agentVersion).not.toBe("");
    expect(reg.timestamp).toBeInstanceOf(Date);
    expect(node.endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("heartbeats right after registering, then at the interval the answer gives", async () => {
    const { fake, node } = await harness({}, { heartbeatIntervalSeconds: 1 });
    expect(node.heartbeatIntervalMs).toBe(1000);
    await waitUntil(() => fake.heartbeatsOf("node-a").length >= 1, { timeoutMs: 500, message: "first heartbeat" });
    const start = Date.now();
    await waitUntil(() => fake.heartbeatsOf("node-a").length >= 3, { timeoutMs: 4000, message: "two more heartbeats" });
    const elapsed = Date.now() - start;
    expect(elapsed).toBeGreaterThan(1500); // two ticks of 1 s ± 10 %
    expect(elapsed).toBeLessThan(3000);
  });

  it("retries a refused registration with backoff and registers once accepted", async () => {
    const fake = await FakeAgentControl.start();
    cleanups.push(() => fake.close());
    fake.rejectReason = "control plane frozen";
    const node = await SimulatedNode.start({
      node: description,
      controlPlane: fake.address,
      registerBackoff: { initialMs: 20, maxMs: 40 },
    });
    cleanups.push(() => node.close());
    await waitUntil(() => fake.registrationCount >= 3, { message: "registration retries" });
    expect(node.isRegistered).toBe(false);
    fake.rejectReason = undefined;
    await node.registered(2000);
    expect(node.stats.registrationFailures).toBeGreaterThanOrEqual(3);
  });
});

describe("ApplyWorkload", () => {
  it("reports STARTING then RUNNING promptly, with the generation, revision and published ports", async () => {
    // The fake's interval is 60 s: only the prompt reports can deliver these states in time.
    const { fake, caller } = await harness({ startDelayMs: 200 });
    const res = await caller.apply(
      assignmentRequest({
        workloadId: "web",
        generation: 3,
        revision: "r-abc",
        ports: [{ hostPort: 8080, containerPort: 80 }],
      }),
    );
    expect(res).toMatchObject({ applied: true, skipped: false });
    expect(res.status?.actualState).toBe(agent.ActualState.ACTUAL_STATE_PENDING);

    const starting = await waitUntil(
      reported(fake, "node-a", (r) => r.workloadId === "web" && r.state === api.ReplicaState.REPLICA_STATE_STARTING),
      { timeoutMs: 1000, message: "STARTING reported" },
    );
    expect(starting.goStatus?.state).toBe("Pending");

    const running = await waitUntil(
      reported(fake, "node-a", (r) => r.workloadId === "web" && r.state === api.ReplicaState.REPLICA_STATE_RUNNING),
      { timeoutMs: 1500, message: "RUNNING reported" },
    );
    expect(running.report).toMatchObject({
      replicaIndex: 0,
      observedRevision: "r-abc",
      assignmentGeneration: 3,
      restartCount: 0,
      endpoints: [
        {
          kind: api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT,
          address: "127.0.0.1",
          port: 8080,
          targetPort: 80,
          protocol: api.Protocol.PROTOCOL_TCP,
        },
      ],
    });
    expect(running.report.startedAt).toBeInstanceOf(Date);
    expect(running.goStatus).toMatchObject({
      state: "Running",
      failureReason: control.FailureReason.FAILURE_REASON_UNSPECIFIED,
    });
    expect(running.hb.usage).toMatchObject({
      cpuAllocatedMillicores: 100,
      memoryAllocatedMb: 64,
      cpuUsedMillicores: 50,
    });
  });

  it("answers skipped for the same revision and state, and re-creates for a new revision", async () => {
    const { node, caller } = await harness({ startDelayMs: 0 });
    await caller.apply(assignmentRequest({ workloadId: "api", revision: "r1" }));
    await waitUntil(() => node.replica("api")?.state === "RUNNING");
    const runtimeId = node.replica("api")!.runtimeId;

    const cases = [
      { name: "same revision", req: { revision: "r1" }, applied: true, skipped: true, sameRuntime: true },
      {
        name: "same revision, newer generation",
        req: { revision: "r1", generation: 2 },
        applied: true,
        skipped: true,
        sameRuntime: true,
      },
      {
        name: "new revision",
        req: { revision: "r2", generation: 2 },
        applied: true,
        skipped: false,
        sameRuntime: false,
      },
    ];
    for (const c of cases) {
      const before = node.replica("api")!.runtimeId;
      const res = await caller.apply(assignmentRequest({ workloadId: "api", ...c.req }));
      expect({ name: c.name, applied: res.applied, skipped: res.skipped }).toEqual({
        name: c.name,
        applied: c.applied,
        skipped: c.skipped,
      });
      expect(node.replica("api")!.runtimeId === before, c.name).toBe(c.sameRuntime);
    }
    expect(node.replica("api")).toMatchObject({ revision: "r2", generation: 2 });
    expect(node.replica("api")!.runtimeId).not.toBe(runtimeId);
    expect(node.counters).toMatchObject({ applies: 4, applied: 2, skipped: 2, rejected: 0 });
  });

  it("refuses an assignment older than the generation the node holds (fencing)", async () => {
    const { node, caller } = await harness({ startDelayMs: 0 });
    await caller.apply(assignmentRequest({ workloadId: "db", generation: 5 }));
    const res = await caller.apply(assignmentRequest({ workloadId: "db", generation: 4, revision: "r-old" }));
    expect(res.applied).toBe(false);
    expect(res.message).toMatch(/stale assignment: generation 4 is older than 5/);
    expect(node.replica("db")).toMatchObject({ generation: 5, revision: "rev-1" });
    // A Go request carries no generation: it is not fenced and keeps the generation held.
    const go = await caller.apply({
      id: "db",
      revisionId: "rev-1",
      desiredState: agent.DesiredState.DESIRED_STATE_STOPPED,
    });
    expect(go.applied).toBe(true);
    expect(node.replica("db")).toMatchObject({ generation: 5, state: "STOPPED" });
  });

  it("stops on desired STOPPED and starts again on RUNNING without re-creating", async () => {
    const { node, caller, fake } = await harness({ startDelayMs: 0 });
    await caller.apply(assignmentRequest({ workloadId: "job" }));
    await waitUntil(() => node.replica("job")?.state === "RUNNING");
    const runtimeId = node.replica("job")!.runtimeId;
    const stop = await caller.apply(assignmentRequest({ workloadId: "job", desired: "stopped" }));
    expect(stop).toMatchObject({ applied: true, skipped: false });
    expect(node.replica("job")?.state).toBe("STOPPED");
    await waitUntil(
      () => fake.lastHeartbeat("node-a")?.workloadStatuses.find((s) => s.workloadId === "job-0")?.state === "Stopped",
      {
        message: "Stopped reported",
      },
    );
    expect((await caller.apply(assignmentRequest({ workloadId: "job", desired: "stopped" }))).skipped).toBe(true);
    expect(node.stops()).toMatchObject([{ workloadId: "job", index: 0, state: "RUNNING" }]);
    await caller.apply(assignmentRequest({ workloadId: "job" }));
    await waitUntil(() => node.replica("job")?.state === "RUNNING");
    expect(node.replica("job")!.runtimeId).toBe(runtimeId);
  });

  it("reads the Go fields when the request has no Persys extension", async () => {
    const { node, caller, fake } = await harness({ startDelayMs: 0 });
    const res = await caller.apply({
      id: "legacy",
      type: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
      revisionId: "go-rev",
      desiredState: agent.DesiredState.DESIRED_STATE_RUNNING,
      spec: {
        spec: {
          $case: "container",
          value: agent.ContainerSpec.fromPartial({
            image: "redis:7",
            ports: [{ hostPort: 6379, containerPort: 6379, protocol: "tcp" }],
            resources: { cpuShares: 500, memoryBytes: 256 * 1048576, memorySwapBytes: 0 },
          }),
        },
      },
    });
    expect(res.applied).toBe(true);
    await waitUntil(() => node.replica("legacy")?.state === "RUNNING");
    expect(node.replica("legacy")).toMatchObject({
      agentId: "legacy",
      index: 0,
      generation: 0,
      revision: "go-rev",
      resources: { cpuMillicores: 500, memoryMiB: 256 },
      restart: { policy: "no" },
    });
    const hb = await waitUntil(() =>
      fake
        .heartbeatsOf("node-a")
        .findLast((h) => h.workloadStatuses.some((s) => s.workloadId === "legacy" && s.state === "Running")),
    );
    expect(hb.usage?.memoryAllocatedMb).toBe(256);
  });

  it("answers an invalid request in the response, never with a gRPC error", async () => {
    const { caller } = await harness();
    const res = await caller.apply({ id: "" });
    expect(res).toMatchObject({ applied: false, skipped: false });
    expect(res.message).toMatch(/^invalid request: /);
  });

  it("refuses a kind the node has no runtime for", async () => {
    const { caller } = await harness({ node: { ...description, id: "node-a", runtimes: ["container"] } });
    const res = await caller.apply(assignmentRequest({ workloadId: "vm1", kind: "vm" }));
    expect(res.applied).toBe(false);
    expect(res.message).toMatch(/runtime vm is not available/);
  });
});

describe("AgentService reads", () => {
  it("GetWorkloadStatus answers NOT_FOUND for an unknown id; DeleteWorkload of a missing one succeeds", async () => {
    const { caller, node } = await harness({ startDelayMs: 0 });
    const error = await caller.status("nope").catch((e: ServiceError) => e);
    expect((error as ServiceError).code).toBe(grpcStatus.NOT_FOUND);
    expect((error as ServiceError).details).toMatch(/status not found/);
    expect(await caller.delete("nope")).toMatchObject({ success: true });
    expect(node.counters.deletedMissing).toBe(1);
  });

  it("DeleteWorkload removes the replica, records it, and the next heartbeat no longer carries it", async () => {
    const { caller, node, fake } = await harness({ startDelayMs: 0 });
    await caller.apply(assignmentRequest({ workloadId: "web", generation: 7 }));
    await waitUntil(() => fake.lastHeartbeat("node-a")?.persysReplicas.length === 1, { message: "replica reported" });
    expect(await caller.delete("web-0")).toMatchObject({ success: true });
    expect(node.replicas()).toEqual([]);
    expect(node.deletions()).toMatchObject([{ workloadId: "web", index: 0, generation: 7 }]);
    await waitUntil(() => fake.lastHeartbeat("node-a")?.persysReplicas.length === 0, { message: "removal reported" });
  });

  it("ListWorkloads filters by type, HealthCheck reports reservations, ListActions is bounded", async () => {
    const { caller } = await harness({ startDelayMs: 0, actionLogSize: 3 });
    await caller.apply(assignmentRequest({ workloadId: "c1", resources: { cpuMillicores: 775, memoryMiB: 1536 } }));
    await caller.apply(
      assignmentRequest({ workloadId: "v1", kind: "vm", resources: { cpuMillicores: 1550, memoryMiB: 1536 } }),
    );
    await caller.apply(assignmentRequest({ workloadId: "c1" }));
    await caller.delete("gone");

    const all = await caller.list();
    const vms = await caller.list(agent.WorkloadType.WORKLOAD_TYPE_VM);
    expect(all.workloads.map((w) => w.id).sort()).toEqual(["c1-0", "v1-0"]);
    expect(vms.workloads.map((w) => w.id)).toEqual(["v1-0"]);
    expect(vms.workloads[0]?.persys?.workloadId).toBe("v1");

    const health = await caller.health();
    expect(health).toMatchObject({
      healthy: true,
      runtimeStatus: { container: "healthy", compose: "healthy", vm: "healthy" },
    });
    expect(health.cpuUtilization).toBeCloseTo(30, 5); // (775 + 1550) / 7750
    expect(health.memoryUtilization).toBeCloseTo(20, 5); // 3072 / 15360

    const actions = await caller.actions({ newestFirst: true });
    expect(actions.actions.map((a) => [a.actionType, a.workloadId, a.status])).toEqual([
      ["delete_workload", "gone", "completed"],
      ["apply_workload", "c1-0", "skipped"],
      ["apply_workload", "v1-0", "completed"],
    ]);
    expect(actions.actions[0]?.taskId).toMatch(/^delete-gone-\d+$/);
    expect((await caller.actions({ actionType: "apply_workload", limit: 1 })).actions).toHaveLength(1);
  });
});
