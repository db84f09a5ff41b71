/**
 * MoveReplica on a real control plane (real etcd and Redis, simulated agents): the scheduler
 * re-places the replica off its node with a diagnosis that says so, the old copy stops only after
 * the new assignment, repeats are no-ops, bad requests name the field; and an automation policy
 * on the REBALANCE finding moves one replica off the most reserved node through the same API.
 */
import { api, PersysClient, PersysError } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { container, type Harness, startHarness, testConfig, until } from "../controlplane/control-plane-harness.js";

let h: Harness;
let client: PersysClient;

const replicaOf = async (id: string, index: number) =>
  ((await h.rest("GET", `/v1/workloads/${id}`)).body.workload.status.replicas ?? []).find(
    (r: any) => (r.index ?? 0) === index,
  );
const runningOn = (node: string, id: string, index: number) =>
  h.nodes.find((n) => n.id === node)?.replica(id, index)?.state === "RUNNING";

beforeAll(async () => {
  h = await startHarness(
    testConfig({ "intelligence-sample-interval-ms": "200", "automation-evaluate-interval-ms": "250" }),
  );
  await h.addNode({ id: "n1" });
  client = new PersysClient({ endpoint: h.server.grpcAddress });
}, 60_000);

afterAll(async () => {
  client?.close();
  await h?.close();
});

describe("MoveReplica", () => {
  it("re-places the replica off its node, explains it, and stops the old copy after the new assignment", async () => {
    await h.rest(
      "PUT",
      "/v1/workloads/api",
      container("api", { replicas: 2, resources: { cpuMillicores: 100, memoryMib: 64 } }),
    );
    await until("api running on n1", () => runningOn("n1", "api", 0) && runningOn("n1", "api", 1));
    // One node only: nowhere to go, and nothing changes.
    const stuck = await client.workloads.move("api", 1).catch((e) => e);
    expect(stuck).toBeInstanceOf(PersysError);
    expect(stuck.code).toBe("UNSCHEDULABLE");
    expect(stuck.message).toMatch(/cannot move off n1: 0\/1 nodes are available: 1 being left by this replica/);
    expect(stuck.details).toEqual([{ path: "replicaIndex", reason: expect.stringMatching(/^0\/1 nodes/) }]);

    await h.addNode({ id: "n2" });
    const moved = await client.workloads.move("api", 1, { fromNode: "n1", reason: "make room" });
    expect(moved).toMatchObject({ moved: true, fromNode: "n1" });
    expect(moved.diagnosis?.winnerNodeId).toBe("n2");
    await until("api/1 running on n2", () => runningOn("n2", "api", 1));
    await until("the old copy stopped on n1", () => !runningOn("n1", "api", 1));
    expect(runningOn("n1", "api", 0)).toBe(true);
    const replica = await replicaOf("api", 1);
    expect(replica.nodeId).toBe("n2");
    expect(replica.placement.message).toMatch(/^moved from n1 \(make room, by [^)]+\): placed on n2/);
    expect(replica.placement.filterCounts).toContainEqual({
      plugin: "replica-move",
      reason: "NODE_BEING_LEFT",
      count: 1,
    });
    const events = (await h.rest("GET", "/v1/workloads/api/events?types=ReplicaMoved")).body.events;
    expect(events.map((e: any) => e.message)).toEqual([
      expect.stringMatching(/^replica 1 moved from n1 to n2: make room/),
    ]);

    // The same request again: the replica has left n1, nothing changes.
    const again = await client.workloads.move("api", 1, { fromNode: "n1", reason: "make room" });
    expect(again.moved).toBe(false);
    expect((await replicaOf("api", 1)).nodeId).toBe("n2");
  });

  it("moves onto the named node over REST, and names the bad field of a bad request", async () => {
    const res = await h.rest("POST", "/v1/workloads/api/replicas/0/move", { toNode: "n2", reason: "test" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ moved: true, fromNode: "n1" });
    await until("api/0 on n2", async () => (await replicaOf("api", 0)).nodeId === "n2" && runningOn("n2", "api", 0));
    const cases = [
      {
        name: "index out of range",
        path: "/v1/workloads/api/replicas/5/move",
        body: {},
        status: 400,
        field: "replicaIndex",
      },
      {
        name: "unknown target",
        path: "/v1/workloads/api/replicas/0/move",
        body: { toNode: "nope" },
        status: 404,
        field: "toNode",
      },
      {
        name: "target is where it is",
        path: "/v1/workloads/api/replicas/0/move",
        body: { toNode: "n2" },
        status: 400,
        field: "toNode",
      },
      { name: "not an index", path: "/v1/workloads/api/replicas/x/move", body: {}, status: 400, field: "replicaIndex" },
      {
        name: "unknown workload",
        path: "/v1/workloads/none/replicas/0/move",
        body: {},
        status: 404,
        field: "workloadId",
      },
    ];
    for (const c of cases) {
      const bad = await h.rest("POST", c.path, c.body);
      expect({ name: c.name, status: bad.status, field: bad.body.details?.[0]?.path }).toEqual({
        name: c.name,
        status: c.status,
        field: c.field,
      });
    }
  });
});

describe("automation: move one replica to rebalance", () => {
  it("moves a replica off the most reserved node when the REBALANCE finding appears", async () => {
    await h.rest(
      "PUT",
      "/v1/workloads/api",
      container("api", { replicas: 0, resources: { cpuMillicores: 100, memoryMib: 64 } }),
    );
    // hog fills n3 (1400 of 2000 m reserved) while n4 is not there yet.
    for (const n of h.nodes.filter((n) => n.id === "n1" || n.id === "n2")) await n.close();
    await h.addNode({ id: "n3" });
    await h.rest(
      "PUT",
      "/v1/workloads/hog",
      container("hog", { replicas: 2, resources: { cpuMillicores: 700, memoryMib: 256 } }),
    );
    await until("hog on n3", () => runningOn("n3", "hog", 0) && runningOn("n3", "hog", 1));
    await until("n1 and n2 not ready", async () => {
      const nodes = (await h.rest("GET", "/v1/nodes")).body.nodes;
      return nodes.filter((n: any) => n.state === "NODE_STATE_READY").length === 1;
    });
    await h.addNode({ id: "n4" });
    const recs = await until("a rebalance finding", async () =>
      (await client.intelligence.recommendations()).find(
        (r) => r.kind === api.RecommendationKind.RECOMMENDATION_KIND_REBALANCE,
      ),
    ).then((r) => r!);
    expect(recs).toMatchObject({ workloadId: "hog", nodeId: "n3", targetNodeId: "n4" });
    await client.automation.apply({
      id: "rebalance",
      when: { finding: { kind: "rebalance" } },
      action: { move: {} },
      cooldownSeconds: 60,
    });
    const acted = await until("the policy acted", async () =>
      (await client.automation.audit({ policyId: "rebalance" })).find(
        (r) => r.outcome === api.AuditOutcome.AUDIT_OUTCOME_ACTED,
      ),
    ).then((r) => r!);
    expect(acted.action).toBe(`move hog/${recs.replicaIndex} off n3`);
    expect(acted.observed).toMatch(/^finding rebalance\/n3\/n4:/);
    expect(acted.message).toMatch(new RegExp(`^hog/${recs.replicaIndex} moving off n3: placed on n4`));
    await until(
      "hog spread over n3 and n4",
      () => runningOn("n4", "hog", recs.replicaIndex!) && !runningOn("n3", "hog", recs.replicaIndex!),
    );
    const replica = await replicaOf("hog", recs.replicaIndex!);
    expect(replica.placement.message).toMatch(/^moved from n3 \(policy rebalance, by [^)]+\): placed on n4/);
  });
});
