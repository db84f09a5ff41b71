import { describe, expect, it } from "vitest";
import type { PlacementRequest } from "../model/placement-request.js";
import type { SchedulerNode } from "../model/scheduler-node.js";
import { SchedulerEngine, type SchedulerOptions } from "../scheduler-engine.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import { ClusterSnapshot, type ReplicaPlacement } from "../snapshot/cluster-snapshot.js";

/** The score `plugin` gives each node for the next replica of `request` (absent when skipped). */
function scores(
  plugin: string,
  nodes: SchedulerNode[],
  request: PlacementRequest,
  placed: ReplicaPlacement[] = [],
  options: SchedulerOptions = {},
): Record<string, number | undefined> {
  const snapshot = new ClusterSnapshot();
  for (const n of nodes) snapshot.upsertNode(n);
  for (const p of placed) snapshot.reserve(p);
  const engine = new SchedulerEngine(snapshot, options);
  let replica = 0;
  while (snapshot.placementOf(request.workloadId, replica)) replica++;
  const out: Record<string, number | undefined> = {};
  for (const e of engine.explainNodes({ ...request, replicas: replica + 1 }, replica)) {
    out[e.nodeId] = e.scores.find((s) => s.plugin === plugin)?.score;
  }
  return out;
}

const hold = (nodeId: string, cpu: number, memory: number, workloadId = `filler-${nodeId}`, replica = 0) => ({
  workloadId,
  replica,
  nodeId,
  resources: resources(cpu, memory),
});

describe("resource allocation scorers", () => {
  const nodes = [makeNode("empty"), makeNode("half"), makeNode("full")];
  const placed = [hold("half", 2000, 4096), hold("full", 3000, 6144)];
  const request = makeRequest("w", { resources: resources(1000, 2048) });

  it.each([
    {
      name: "least-allocated favours the emptiest node",
      strategy: "least-allocated",
      want: { empty: 75, half: 25, full: 0 },
    },
    { name: "bin-pack favours the fullest node", strategy: "bin-pack", want: { empty: 25, half: 75, full: 100 } },
  ] as const)("$name", ({ strategy, want }) => {
    expect(scores(strategy, nodes, request, placed, { strategy })).toEqual(want);
  });

  it("counts disk only when the request asks for disk", () => {
    const disky = [makeNode("n", { allocatable: resources(4000, 8192, 100) })];
    expect(scores("least-allocated", disky, makeRequest("w", { resources: resources(2000, 4096, 0) }))).toEqual({
      n: 50,
    });
    expect(scores("least-allocated", disky, makeRequest("w", { resources: resources(2000, 4096, 100) }))).toEqual({
      n: 33,
    });
  });
});

describe("measured-utilisation scorer", () => {
  it.each([
    { name: "idle node", usage: resources(0, 0), want: 100 },
    { name: "busiest dimension decides", usage: resources(1000, 6144), want: 25 },
    { name: "usage beyond capacity clamps at 0", usage: resources(8000, 0), want: 0 },
    { name: "no report is neutral", usage: undefined, want: 50 },
  ])("$name", ({ usage, want }) => {
    expect(scores("measured-utilisation", [makeNode("n", { usage })], makeRequest("w"))).toEqual({ n: want });
  });

  it("never changes what fits: a node reporting full usage still takes a replica that fits by reservation", () => {
    const snapshot = new ClusterSnapshot();
    snapshot.upsertNode(makeNode("busy", { usage: resources(4000, 8192) }));
    const d = new SchedulerEngine(snapshot).place(makeRequest("w")).decisions[0]!;
    expect(d.nodeId).toBe("busy");
  });
});

describe("replica-spread scorer", () => {
  const nodes = [makeNode("a"), makeNode("b"), makeNode("c")];
  const web = makeRequest("web", { replicas: 4 });
  it.each([
    { name: "skipped before any replica is placed", placed: [], want: { a: undefined, b: undefined, c: undefined } },
    {
      name: "a node with one sibling scores half",
      placed: [hold("a", 100, 128, "web", 0)],
      want: { a: 50, b: 100, c: 100 },
    },
    {
      name: "two siblings score a third",
      placed: [hold("a", 100, 128, "web", 0), hold("a", 100, 128, "web", 1)],
      want: { a: 33, b: 100, c: 100 },
    },
  ])("$name", ({ placed, want }) => {
    expect(scores("replica-spread", nodes, web, placed)).toEqual(want);
  });

  it("is off for antiAffinity.replicas none", () => {
    const request = makeRequest("web", { replicas: 2, placement: { antiAffinity: { replicas: "none" } } });
    expect(scores("replica-spread", nodes, request, [hold("a", 100, 128, "web", 0)])).toEqual({
      a: undefined,
      b: undefined,
      c: undefined,
    });
  });
});

describe("preferred-affinity scorer", () => {
  const nodes = [
    makeNode("ssd-a", { labels: { disk: "ssd", zone: "a" } }),
    makeNode("ssd-b", { labels: { disk: "ssd", zone: "b" } }),
    makeNode("hdd-a", { labels: { disk: "hdd", zone: "a" } }),
  ];
  it("scores the matched share of the total weight", () => {
    const request = makeRequest("w", {
      placement: {
        preferredAffinity: [
          { weight: 75, match: [{ key: "disk", operator: "In", values: ["ssd"] }] },
          { weight: 25, match: [{ key: "zone", operator: "In", values: ["a"] }] },
        ],
      },
    });
    expect(scores("preferred-affinity", nodes, request)).toEqual({ "ssd-a": 100, "ssd-b": 75, "hdd-a": 25 });
  });

  it("is skipped without preferences", () => {
    expect(scores("preferred-affinity", nodes, makeRequest("w"))).toEqual({
      "ssd-a": undefined,
      "ssd-b": undefined,
      "hdd-a": undefined,
    });
  });
});

describe("topology-spread scorer", () => {
  const nodes = [
    makeNode("a1", { labels: { zone: "a" } }),
    makeNode("b1", { labels: { zone: "b" } }),
    makeNode("c1", { labels: { zone: "c" } }),
  ];
  const request = makeRequest("web", {
    replicas: 6,
    placement: { spread: [{ labelKey: "zone", maxSkew: 3, whenUnsatisfiable: "schedule-anyway" }] },
  });
  it("prefers the least loaded zone, linearly down to the most loaded", () => {
    const placed = [hold("a1", 100, 128, "web", 0), hold("a1", 100, 128, "web", 1), hold("b1", 100, 128, "web", 2)];
    expect(scores("topology-spread", nodes, request, placed)).toEqual({ a1: 0, b1: 50, c1: 100 });
  });
});
