// Liveness of a simulated node: pause/resume, lease expiry, NOT_FOUND re-registration, dead and
// returning nodes.
import { status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { api } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { assignmentRequest } from "./apply-request.js";
import { useHarness } from "./node-harness.js";
import { eventually, waitUntil } from "./wait.js";

const { harness } = useHarness();

describe("liveness", () => {
  it("pauseHeartbeats stops heartbeats while the node keeps serving; resume heartbeats at once", async () => {
    const { node, caller, fake } = await harness({ heartbeatIntervalMs: 50, startDelayMs: 0 });
    await waitUntil(() => fake.heartbeatsOf("node-a").length >= 2);
    node.pauseHeartbeats();
    await new Promise((r) => setTimeout(r, 30)); // let a heartbeat in flight land
    const frozen = fake.heartbeatsOf("node-a").length;
    await caller.apply(assignmentRequest({ workloadId: "web" })); // state changes must not report either
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.heartbeatsOf("node-a").length).toBe(frozen);
    expect(node.replica("web")?.state).toBe("RUNNING");
    node.resumeHeartbeats();
    await waitUntil(() => fake.heartbeatsOf("node-a").length > frozen, {
      timeoutMs: 200,
      message: "heartbeat on resume",
    });
    expect(fake.lastHeartbeat("node-a")?.persysReplicas.map((r) => r.workloadId)).toEqual(["web"]);
  });

  it("re-registers when its lease expired while paused", async () => {
    const { node, fake } = await harness({ heartbeatIntervalMs: 1000 }, { leaseMs: 100 });
    node.pauseHeartbeats();
    await new Promise((r) => setTimeout(r, 200));
    node.resumeHeartbeats();
    await waitUntil(() => fake.registrationsOf("node-a").length === 2, { message: "re-registration" });
    expect(node.stats.leaseExpired).toBe(1);
    await waitUntil(() => node.stats.heartbeats >= 2, { message: "heartbeat after re-registration" });
  });

  it("re-registers when a heartbeat answers NOT_FOUND", async () => {
    const { node, fake } = await harness({ heartbeatIntervalMs: 50 });
    await waitUntil(() => node.stats.heartbeats >= 1);
    fake.forget("node-a");
    await waitUntil(() => fake.registrationsOf("node-a").length === 2, { message: "re-registration after NOT_FOUND" });
    expect(node.stats.notFound).toBe(1);
    const after = fake.nodes.get("node-a")!.heartbeats;
    await waitUntil(() => fake.nodes.get("node-a")!.heartbeats > after, { message: "heartbeats accepted again" });
  });

  it("stop() is a dead node; start() returns on the same endpoint with its old replicas", async () => {
    const { node, caller, fake } = await harness({ heartbeatIntervalMs: 50, startDelayMs: 0 });
    await caller.apply(assignmentRequest({ workloadId: "web", generation: 1 }));
    const endpoint = node.endpoint;
    await node.stop();
    const count = fake.heartbeatsOf("node-a").length;
    const error = await caller.health().catch((e: ServiceError) => e);
    expect((error as ServiceError).code).toBe(grpcStatus.UNAVAILABLE);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.heartbeatsOf("node-a").length).toBe(count);

    await node.start();
    expect(node.endpoint).toBe(endpoint);
    await waitUntil(() => fake.registrationsOf("node-a").length === 2, { message: "registration on return" });
    const hb = await node.nextHeartbeat((h) => h.persysReplicas.length === 1, 2000);
    expect(hb.persysReplicas[0]).toMatchObject({
      workloadId: "web",
      assignmentGeneration: 1,
      state: api.ReplicaState.REPLICA_STATE_RUNNING,
    });
    // The caller's channel reconnects with backoff after the refused connection.
    expect((await eventually(() => caller.health())).healthy).toBe(true);
  });
});
