// Fleets: one shared AgentService endpoint routed by the persys-node-id header, per-node endpoints,
// heartbeats spread over the interval, and node descriptions from the scheduler's cluster generator.
import { status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { api } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import type { SchedulerNode } from "../../../controlplane/src/scheduler/model/scheduler-node.js";
import { makeNode } from "../../../controlplane/src/scheduler/simulation/index.js";
import { connectAgent } from "./agent-caller.js";
import { assignmentRequest } from "./apply-request.js";
import { fromSchedulerNode, simulatedNodes } from "./cluster-nodes.js";
import { FakeAgentControl } from "./fake-agent-control.js";
import type { SimNodeDescription } from "./node-description.js";
import { type SimulatedFleet, startFleet } from "./simulated-fleet.js";
import { waitUntil } from "./wait.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const small = (id: string): SimNodeDescription => ({
  id,
  capacity: { cpuMillicores: 2000, memoryMiB: 4096, diskGiB: 50 },
});

async function fleetOf(
  nodes: SimNodeDescription[],
  mode: "shared" | "per-node",
  heartbeatIntervalMs = 200,
): Promise<{ fake: FakeAgentControl; fleet: SimulatedFleet }> {
  const fake = await FakeAgentControl.start();
  cleanups.push(() => fake.close());
  const fleet = await startFleet({
    controlPlane: fake.address,
    nodes,
    heartbeatIntervalMs,
    startDelayMs: 0,
    endpointMode: mode,
  });
  cleanups.push(() => fleet.close());
  return { fake, fleet };
}

describe("shared endpoint", () => {
  it("every node registers the one shared endpoint", async () => {
    const { fake, fleet } = await fleetOf(["a", "b", "c"].map(small), "shared");
    expect(fleet.endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(new Set(fake.registrations.map((r) => r.grpcEndpoint))).toEqual(new Set([fleet.endpoint]));
    expect(fake.registrations.map((r) => r.nodeId).sort()).toEqual(["a", "b", "c"]);
  });

  it("routes AgentService calls to the node named by persys-node-id", async () => {
    const { fake, fleet } = await fleetOf(["a", "b", "c"].map(small), "shared");
    const toB = connectAgent(fleet.endpoint!, { nodeId: "b" });
    cleanups.push(() => toB.close());
    expect((await toB.apply(assignmentRequest({ workloadId: "web", nodeId: "b" }))).applied).toBe(true);
    expect(fleet.node("b").replica("web")).toBeDefined();
    expect(fleet.node("a").replicas()).toEqual([]);
    expect(fleet.node("c").replicas()).toEqual([]);
    await waitUntil(
      () => fake.lastHeartbeat("b")?.persysReplicas[0]?.state === api.ReplicaState.REPLICA_STATE_RUNNING,
      {
        message: "b reports web running",
      },
    );
    expect(fake.lastHeartbeat("a")?.persysReplicas).toEqual([]);
    expect((await toB.list()).workloads.map((w) => w.id)).toEqual(["web-0"]);
  });

  const refusals: { name: string; nodeId?: string; stop?: string; code: grpcStatus; text: RegExp }[] = [
    { name: "no header", code: grpcStatus.INVALID_ARGUMENT, text: /persys-node-id/ },
    { name: "unknown node", nodeId: "zz", code: grpcStatus.UNAVAILABLE, text: /zz is not reachable/ },
    { name: "stopped node", nodeId: "a", stop: "a", code: grpcStatus.UNAVAILABLE, text: /a is not reachable/ },
  ];
  for (const c of refusals) {
    it(`refuses a call with ${c.name}`, async () => {
      const { fleet } = await fleetOf(["a", "b"].map(small), "shared");
      if (c.stop) await fleet.node(c.stop).stop();
      const caller = connectAgent(fleet.endpoint!, c.nodeId === undefined ? {} : { nodeId: c.nodeId });
      cleanups.push(() => caller.close());
      const error = (await caller.health().catch((e: ServiceError) => e)) as ServiceError;
      expect(error.code).toBe(c.code);
      expect(error.details).toMatch(c.text);
      expect((await connectAgent(fleet.endpoint!, { nodeId: "b" }).health()).healthy).toBe(true);
    });
  }
});

describe("per-node endpoints", () => {
  it("each node has its own port and answers without the header", async () => {
    const { fake, fleet } = await fleetOf(["a", "b"].map(small), "per-node");
    const endpoints = fake.registrations.map((r) => r.grpcEndpoint);
    expect(new Set(endpoints).size).toBe(2);
    expect(fleet.endpoint).toBeUndefined();
    const toA = connectAgent(fleet.node("a").endpoint);
    cleanups.push(() => toA.close());
    await toA.apply(assignmentRequest({ workloadId: "web" }));
    expect(fleet.node("a").replica("web")).toBeDefined();
    expect(fleet.node("b").replicas()).toEqual([]);
  });
});

describe("heartbeat spread", () => {
  it("spreads 200 nodes' heartbeats over the interval instead of bursts", async () => {
    const intervalMs = 1000;
    const { fake, fleet } = await fleetOf(
      Array.from({ length: 200 }, (_, i) => small(`n${i}`)),
      "shared",
      intervalMs,
    );
    // Skip the registration phase, then bucket arrivals over two intervals by 100 ms.
    await new Promise((r) => setTimeout(r, intervalMs));
    const arrivals: number[] = [];
    fake.onHeartbeat = () => arrivals.push(Date.now());
    await new Promise((r) => setTimeout(r, 2 * intervalMs));
    fake.onHeartbeat = undefined;
    const t0 = arrivals[0]!;
    const buckets = new Array(20).fill(0) as number[];
    for (const t of arrivals) buckets[Math.min(19, Math.floor((t - t0) / 100))]!++;
    const mean = arrivals.length / buckets.length;
    // ≈ 200 nodes × 2 intervals; the floor is loose because the test machine's cores are shared.
    expect(arrivals.length).toBeGreaterThan(200);
    expect(arrivals.length).toBeLessThan(480);
    // Synchronized ticks would put all ~400 arrivals in one or two buckets (≥ 10× the mean); the bound
    // leaves room for the stalls of a shared, loaded test machine.
    expect(Math.max(...buckets)).toBeLessThan(mean * 5);
    expect(fleet.stats()).toMatchObject({ nodes: 200, registered: 200, heartbeatFailures: 0 });
  });
});

describe("node descriptions", () => {
  it("accepts the scheduler's SchedulerNode shape as is", () => {
    const node: SchedulerNode = makeNode("s1", { capabilities: ["kvm"], labels: { zone: "a" } });
    const described: SimNodeDescription = node; // structural: compiles without mapping
    expect(described.id).toBe("s1");
    expect(fromSchedulerNode(node)).toEqual({
      id: "s1",
      labels: { zone: "a" },
      capabilities: ["kvm"],
      runtimes: ["container", "compose"],
      arch: "amd64",
      os: "linux",
      capacity: node.capacity,
      allocatable: node.allocatable,
      usage: undefined,
    });
  });

  it("simulatedNodes builds a reproducible heterogeneous fleet from the cluster generator", () => {
    const nodes = simulatedNodes({ count: 400, seed: 7 });
    expect(nodes).toEqual(simulatedNodes({ count: 400, seed: 7 }));
    expect(new Set(nodes.map((n) => n.id)).size).toBe(400);
    expect(new Set(nodes.map((n) => n.capacity.memoryMiB)).size).toBeGreaterThan(1);
    expect(new Set(nodes.map((n) => n.arch))).toEqual(new Set(["amd64", "arm64"]));
    expect(nodes.some((n) => n.capabilities?.includes("kvm") && n.runtimes?.includes("vm"))).toBe(true);
    expect(nodes.some((n) => !n.runtimes?.includes("vm"))).toBe(true);
    for (const n of nodes) {
      expect(n.allocatable!.cpuMillicores).toBeLessThan(n.capacity.cpuMillicores);
      expect(Object.keys(n.labels ?? {})).toContain("topology.persys.io/zone");
    }
  });
});
