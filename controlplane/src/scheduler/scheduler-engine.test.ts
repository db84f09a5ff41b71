import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { nodesToScore } from "./framework/sampling.js";
import type { PlacementRequest } from "./model/placement-request.js";
import type { SchedulerNode } from "./model/scheduler-node.js";
import { SchedulerEngine, type SchedulerOptions } from "./scheduler-engine.js";
import { generateCluster, generateWorkloads, zoneNames } from "./simulation/index.js";
import { makeNode, makeRequest, resources } from "./simulation/node-builder.js";
import { ClusterSnapshot } from "./snapshot/cluster-snapshot.js";

function engineOf(nodes: readonly SchedulerNode[], options: SchedulerOptions = {}): SchedulerEngine {
  const snapshot = new ClusterSnapshot();
  for (const n of nodes) snapshot.upsertNode(n);
  return new SchedulerEngine(snapshot, { clock: () => 0, ...options });
}
const three = [makeNode("a"), makeNode("b"), makeNode("c")];

describe("SchedulerEngine.place", () => {
  it("spreads replicas across nodes by default", () => {
    const result = engineOf(three).place(makeRequest("web", { replicas: 3 }));
    expect(new Set(result.decisions.map((d) => d.nodeId)).size).toBe(3);
  });

  it("accounts for earlier replicas' reservations when placing the next", () => {
    const engine = engineOf([makeNode("only", { allocatable: resources(2500, 8192, 100) })]);
    const result = engine.place(makeRequest("web", { replicas: 3, resources: resources(1000, 128) }));
    expect(result.decisions.map((d) => d.nodeId)).toEqual(["only", "only", null]);
    expect(result.decisions[2]!.diagnosis.exhaustion).toEqual([
      { dimension: "cpu", needed: 1000, bestAvailable: 500, unit: "millicores", nodesShort: 1 },
    ]);
    expect(engine.snapshot.reservedOn("only").cpuMillicores).toBe(2000);
  });

  it("gives every pending replica its own diagnosis", () => {
    const result = engineOf(three).place(makeRequest("huge", { replicas: 3, resources: resources(100_000, 1) }));
    expect(result.decisions.map((d) => [d.replica, d.nodeId, d.diagnosis.replica, d.diagnosis.feasibleNodes])).toEqual([
      [0, null, 0, 0],
      [1, null, 1, 0],
      [2, null, 2, 0],
    ]);
  });

  it("leaves placed replicas alone and places only the missing ones", () => {
    const engine = engineOf(three);
    engine.place(makeRequest("web", { replicas: 2 }));
    const grown = engine.place(makeRequest("web", { replicas: 3 }));
    expect(grown.alreadyPlaced.map((p) => p.replica)).toEqual([0, 1]);
    expect(grown.decisions.map((d) => d.replica)).toEqual([2]);
  });

  it("refuses to place a replica twice", () => {
    const engine = engineOf(three);
    const compiled = engine.compile(makeRequest("web"));
    engine.placeReplica(compiled, 0);
    expect(() => engine.placeReplica(compiled, 0)).toThrow(PersysError);
  });

  it.each([
    { name: "least-allocated picks the emptier node", strategy: "least-allocated", want: "empty" },
    { name: "bin-pack picks the fuller node", strategy: "bin-pack", want: "busy" },
  ] as const)("$name", ({ strategy, want }) => {
    const engine = engineOf([makeNode("busy"), makeNode("empty")], { strategy, weights: { measuredUtilisation: 0 } });
    engine.snapshot.reserve({ workloadId: "x", replica: 0, nodeId: "busy", resources: resources(2000, 4096) });
    expect(engine.place(makeRequest("web")).decisions[0]!.nodeId).toBe(want);
  });

  it("rejects invalid requests before scheduling and invalid options at construction", () => {
    const engine = engineOf(three);
    expect(() => engine.place({ ...makeRequest("web"), replicas: -1 } as PlacementRequest)).toThrow(/replicas/);
    expect(() => new SchedulerEngine(new ClusterSnapshot(), { maxCandidates: 0 })).toThrow(/maxCandidates/);
    expect(() => engine.explainNode(makeRequest("web"), "nope")).toThrow(/not in the scheduler snapshot/);
  });

  it("explains an empty cluster", () => {
    const d = engineOf([]).place(makeRequest("web")).decisions[0]!.diagnosis;
    expect([d.nodesEvaluated, d.feasibleNodes, d.winner, d.filterCounts.length]).toEqual([0, 0, null, 0]);
  });
});

describe("SchedulerEngine.plan (dry run)", () => {
  it("answers what place would do, replica by replica, and reserves nothing", () => {
    const nodes = generateCluster({ nodes: 50, seed: 5 });
    const planner = engineOf(nodes, { seed: 9 });
    const placer = engineOf(nodes, { seed: 9 });
    for (const request of generateWorkloads({ count: 60, seed: 5, zones: zoneNames(50) })) {
      const [generation, replicas] = [planner.snapshot.generation, planner.snapshot.replicaCount];
      const planned = planner.plan(request);
      expect([planner.snapshot.generation, planner.snapshot.replicaCount]).toEqual([generation, replicas]);
      const placed = placer.place(request);
      expect(planned.decisions.map((d) => d.nodeId)).toEqual(placed.decisions.map((d) => d.nodeId));
      expect(planned.decisions.map((d) => d.diagnosis.message)).toEqual(
        placed.decisions.map((d) => d.diagnosis.message),
      );
      // Keep the planner's cluster in step with the placer's, so later plans see the same state.
      for (const d of placed.decisions) {
        if (d.nodeId) {
          planner.snapshot.reserve({
            workloadId: request.workloadId,
            replica: d.replica,
            nodeId: d.nodeId,
            resources: request.resources,
            ...(request.hostPorts ? { hostPorts: request.hostPorts } : {}),
            ...(request.labels ? { labels: request.labels } : {}),
            ...(request.placement?.antiAffinity?.workloads
              ? { antiAffinity: request.placement.antiAffinity.workloads }
              : {}),
          });
        }
      }
    }
  });
});

describe("large clusters", () => {
  it("filters every node but scores only a sample, rotating it between replicas", () => {
    const nodes = Array.from({ length: 2000 }, (_, i) => makeNode(`n${i}`, { ready: i % 10 !== 0 }));
    const engine = engineOf(nodes, { seed: 1 });
    const result = engine.place(makeRequest("web", { replicas: 20 }));
    const first = result.decisions[0]!.diagnosis;
    expect(first.nodesEvaluated).toBe(2000);
    expect(first.feasibleNodes).toBe(1800);
    expect(first.scoredNodes).toBe(nodesToScore(2000, 1800));
    expect(first.scoredNodes).toBeLessThan(first.feasibleNodes);
    expect(first.filterCounts).toEqual([{ plugin: "node-ready", reason: "NODE_NOT_READY", count: 200 }]);
    expect(first.message).toContain(`1800/2000 nodes feasible, ${first.scoredNodes} scored; top: `);
    // Identical nodes tie, so each winner is the first node of its window: the windows rotate.
    const slots = result.decisions.map((d) => Number(d.nodeId!.slice(1)));
    expect(new Set(slots).size).toBe(20);
    expect(Math.max(...slots) - Math.min(...slots)).toBeGreaterThan(1000);
  });
});
