/**
 * The control plane end to end with simulated agents over gRPC, real etcd (state) and real Redis
 * (events): placement, reporting, pending → placed on cluster change, node loss and fencing,
 * terminal and retryable failures, rolling updates, scaling and deletion.
 */
import { afterEach, describe, expect, it } from "vitest";
import { container, type Harness, startHarness, until } from "./control-plane-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const replicas = (body: any) => body.workload.status.replicas as any[];

describe("control plane with simulated agents", () => {
  it("places, applies and reports running: apply → placed → applied → running, spread over nodes", async () => {
    h = await startHarness();
    const [a, b] = [await h.addNode({ id: "n1" }), await h.addNode({ id: "n2" })];
    const put = await h.rest("PUT", "/v1/workloads/web", container("web", { replicas: 2 }));
    expect(put.status).toBe(201);
    const running = await until("both replicas running", async () => {
      const got = await h!.rest("GET", "/v1/workloads/web");
      return got.body.workload.status.state === "WORKLOAD_STATE_RUNNING" ? got.body : undefined;
    });
    const nodes = replicas(running)
      .map((r) => r.nodeId)
      .sort();
    expect(nodes).toEqual(["n1", "n2"]);
    expect(replicas(running).every((r) => r.placement.winnerNodeId === r.nodeId)).toBe(true);
    expect(a.replicas()).toHaveLength(1);
    expect(b.replicas()).toHaveLength(1);
    // Apply again with the same spec: nothing changes.
    const again = await h.rest("PUT", "/v1/workloads/web", container("web", { replicas: 2 }));
    expect([again.status, again.body.changed ?? false]).toEqual([200, false]);
    const events = await h.rest("GET", "/v1/events?workloadId=web");
    const types = (events.body.events as any[]).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["WorkloadApplied", "ReplicaPlaced", "ReplicaApplied"]));
  });

  it("keeps an unschedulable replica pending with its diagnosis and places it when a node is added", async () => {
    h = await startHarness();
    await h.addNode({ id: "small", capacity: { cpuMillicores: 1000, memoryMiB: 512, diskGiB: 10 } });
    await h.rest("PUT", "/v1/workloads/big", container("big", { resources: { cpuMillicores: 500, memoryMib: 2048 } }));
    const pending = await until("pending with a diagnosis", async () => {
      const got = await h!.rest("GET", "/v1/workloads/big/explain");
      return got.body.replicas?.[0]?.diagnosis ? got.body : undefined;
    });
    expect(pending.replicas[0].state).toBe("REPLICA_STATE_PENDING");
    expect(pending.replicas[0].diagnosis.message).toBe(
      "0/1 nodes are available: 1 insufficient memory (need 2048 MiB, most free 512 MiB).",
    );
    const big = await h.addNode({ id: "big-node", capacity: { cpuMillicores: 4000, memoryMiB: 8192, diskGiB: 50 } });
    await until("placed on the new node and running", async () => big.replica("big")?.state === "RUNNING");
    const reported = await until("reported running through the API", async () => {
      const replica = replicas((await h!.rest("GET", "/v1/workloads/big")).body)[0];
      return replica.state === "REPLICA_STATE_RUNNING" ? replica : undefined;
    });
    expect(reported.nodeId).toBe("big-node");
  });

  it("re-places replicas of a node that stops heartbeating after lostAfter, and stops the stale copy when it returns", async () => {
    h = await startHarness();
    const n1 = await h.addNode({ id: "n1" });
    await h.rest("PUT", "/v1/workloads/api", container("api"));
    await until("running on n1", async () => n1.replica("api")?.state === "RUNNING");
    const n2 = await h.addNode({ id: "n2" });
    n1.pauseHeartbeats();
    const notReady = await until(
      "node NotReady",
      async () => {
        const node = await h!.rest("GET", "/v1/nodes/n1");
        return node.body.node.state === "NODE_STATE_NOT_READY" ? node.body.node : undefined;
      },
      10_000,
    );
    expect(notReady.state).toBe("NODE_STATE_NOT_READY");
    await until("re-placed on n2 and running", async () => n2.replica("api")?.state === "RUNNING", 15_000);
    // n1 comes back still running its old copy: the control plane stops it there.
    n1.resumeHeartbeats();
    await until("stale copy on n1 deleted", async () => n1.replica("api") === undefined, 10_000);
    // The API shows what the agents reported: n2's RUNNING arrives with its next heartbeat.
    const onN2 = await until("the API shows replica 0 running on n2", async () => {
      const got = await h!.rest("GET", "/v1/workloads/api");
      const replica = replicas(got.body)[0];
      return replica?.state === "REPLICA_STATE_RUNNING" ? replica : undefined;
    });
    expect(onN2).toMatchObject({ nodeId: "n2", state: "REPLICA_STATE_RUNNING" });
    const all = (await h.rest("GET", "/v1/events")).body.events;
    const events = all.map((e: any) => e.type);
    expect(events).toEqual(expect.arrayContaining(["NodeNotReady", "NodeLost", "ReplicaMoved", "StrayStopped"]));
    // Moved only once the node was lost: lostAfter (3 s) after it went NotReady, by the server's clock.
    const at = (type: string) => Date.parse(all.find((e: any) => e.type === type).time);
    expect(at("NodeLost") - at("NodeNotReady")).toBeGreaterThanOrEqual(2_900);
    expect(at("ReplicaMoved")).toBeGreaterThanOrEqual(at("NodeLost"));
  });

  it("does not retry a terminal failure blindly, and retries after Retry", async () => {
    h = await startHarness();
    const n1 = await h.addNode({ id: "n1" });
    n1.failNextApply("bad", {
      code: "IMAGE_NOT_FOUND",
      message: "image persys-test/nope:1 not found and no registry",
      retryable: false,
    });
    await h.rest("PUT", "/v1/workloads/bad", container("bad"));
    const failed = await until("failed with the typed reason", async () => {
      const got = await h!.rest("GET", "/v1/workloads/bad");
      return replicas(got.body)[0].state === "REPLICA_STATE_FAILED" ? replicas(got.body)[0] : undefined;
    });
    expect(failed.reason.code).toBe("IMAGE_NOT_FOUND");
    const applies = n1.counters.applies;
    await new Promise((r) => setTimeout(r, 2_000));
    expect(n1.counters.applies).toBe(applies);
    const retried = await h.rest("POST", "/v1/workloads/bad/retry", {});
    expect(retried.body.retriedReplicas).toEqual([0]);
    await until("running after retry", async () => n1.replica("bad")?.state === "RUNNING");
  });

  it("rolls an update one replica at a time and keeps the others running", async () => {
    h = await startHarness();
    const nodes = [await h.addNode({ id: "n1" }), await h.addNode({ id: "n2" }), await h.addNode({ id: "n3" })];
    await h.rest("PUT", "/v1/workloads/roll", container("roll", { replicas: 3 }));
    const first = await until("three running", async () => {
      const got = await h!.rest("GET", "/v1/workloads/roll");
      return got.body.workload.status.state === "WORKLOAD_STATE_RUNNING"
        ? got.body.workload.status.revision
        : undefined;
    });
    let minRunning = 3;
    const watcher = setInterval(() => {
      const running = nodes.flatMap((n) => n.replicas()).filter((r) => r.state === "RUNNING").length;
      minRunning = Math.min(minRunning, running);
    }, 5);
    const updated = container("roll", { replicas: 3 });
    (updated.container as any).env = { VERSION: "2" };
    await h.rest("PUT", "/v1/workloads/roll", updated);
    const second = await until("rolled to the new revision", async () => {
      const got = await h!.rest("GET", "/v1/workloads/roll");
      const s = got.body.workload.status;
      return s.state === "WORKLOAD_STATE_RUNNING" && s.revision !== first ? s.revision : undefined;
    });
    clearInterval(watcher);
    expect(nodes.flatMap((n) => n.replicas()).every((r) => r.revision === second)).toBe(true);
    expect(minRunning).toBeGreaterThanOrEqual(2);
  });

  it("scales down and deletes, leaving nothing on the agents", async () => {
    h = await startHarness();
    const nodes = [await h.addNode({ id: "n1" }), await h.addNode({ id: "n2" })];
    await h.rest("PUT", "/v1/workloads/svc", container("svc", { replicas: 2 }));
    await until(
      "two running",
      async () => nodes.flatMap((n) => n.replicas()).filter((r) => r.state === "RUNNING").length === 2,
    );
    await h.rest("PUT", "/v1/workloads/svc", container("svc", { replicas: 1 }));
    await until("one left", async () => nodes.flatMap((n) => n.replicas()).length === 1);
    const deleted = await h.rest("DELETE", "/v1/workloads/svc");
    expect(deleted.status).toBe(200);
    await until("gone from the API", async () => (await h!.rest("GET", "/v1/workloads/svc")).status === 404);
    expect(nodes.flatMap((n) => n.replicas())).toEqual([]);
    const again = await h.rest("DELETE", "/v1/workloads/svc?allowMissing=true");
    expect(again.status).toBe(200);
    expect((await h.rest("DELETE", "/v1/workloads/svc")).body.code).toBe("NOT_FOUND");
  });
});
