import { describe, expect, it } from "vitest";
import type { SpreadConstraint } from "../model/placement-request.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import { probeFilter, tally } from "../testing/probe-filter.js";

const nodes = [
  makeNode("a1", { labels: { zone: "a" } }),
  makeNode("a2", { labels: { zone: "a" } }),
  makeNode("b1", { labels: { zone: "b" } }),
  makeNode("c1", { labels: { zone: "c" } }),
  makeNode("x", { labels: {} }),
];
const on = (replica: number, nodeId: string) => ({
  workloadId: "web",
  replica,
  nodeId,
  resources: resources(100, 128),
});
const zone = (maxSkew: number, hard = true): SpreadConstraint => ({
  labelKey: "zone",
  maxSkew,
  whenUnsatisfiable: hard ? "do-not-schedule" : "schedule-anyway",
});
const skewed = ["SPREAD_MAX_SKEW"];

describe("topology-spread filter", () => {
  it.each([
    { name: "no replicas yet: only nodes without the label fail", spread: zone(1), placed: [], want: {} },
    {
      name: "a zone at min + maxSkew is full",
      spread: zone(1),
      placed: [on(0, "a1")],
      want: { a1: skewed, a2: skewed },
    },
    {
      name: "maxSkew 2 allows one more",
      spread: zone(2),
      placed: [on(0, "a1")],
      want: {},
    },
    {
      name: "balanced zones are all open",
      spread: zone(1),
      placed: [on(0, "a1"), on(1, "b1"), on(2, "c1")],
      want: {},
    },
    {
      name: "a cordoned-only zone is not eligible and does not pin the minimum",
      spread: zone(1),
      placed: [on(0, "a1"), on(1, "b1")],
      cordonC: true,
      want: {},
    },
    {
      name: "schedule-anyway never filters",
      spread: zone(1, false),
      placed: [on(0, "a1"), on(1, "a2")],
      want: { x: [] },
    },
  ])("$name", ({ spread, placed, want, cordonC }) => {
    const cluster = cordonC ? nodes.map((n) => (n.id === "c1" ? { ...n, cordoned: true } : n)) : nodes;
    const request = makeRequest("web", { replicas: 5, placement: { spread: [spread] } });
    const { perNode, counts } = probeFilter("topology-spread", cluster, request, placed);
    const missing = spread.whenUnsatisfiable === "schedule-anyway" ? [] : ["SPREAD_LABEL_MISSING"];
    const expected = { a1: [], a2: [], b1: [], c1: [], x: missing, ...want };
    expect(perNode).toEqual(expected);
    expect(counts).toEqual(tally(expected));
  });

  it("keeps replicas within maxSkew over zones as it places them", () => {
    const { engine } = probeFilter("topology-spread", nodes, makeRequest("x"));
    const result = engine.place(makeRequest("web", { replicas: 6, placement: { spread: [zone(1)] } }));
    const perZone: Record<string, number> = {};
    for (const d of result.decisions) {
      const z = engine.snapshot.node(d.nodeId!)!.labels.zone!;
      perZone[z] = (perZone[z] ?? 0) + 1;
    }
    expect(perZone).toEqual({ a: 2, b: 2, c: 2 });
  });

  it("recomputes eligible zones when a zone's last node is cordoned, so the minimum moves", () => {
    const { engine } = probeFilter("topology-spread", nodes.slice(0, 4), makeRequest("x"));
    const request = makeRequest("web", { replicas: 2, placement: { spread: [zone(1)] } });
    const first = engine.place(request).decisions.map((d) => engine.snapshot.node(d.nodeId!)!.labels.zone);
    // Two zones hold one replica each; cordon the empty one: it no longer pins the minimum at 0.
    const empty = ["a", "b", "c"].find((z) => !first.includes(z))!;
    for (const n of engine.snapshot.nodes())
      if (n.labels.zone === empty) engine.snapshot.updateNode(n.id, { cordoned: true });
    const third = engine.place({ ...request, replicas: 3 }).decisions[0]!;
    expect(third.nodeId).not.toBeNull();
    expect(third.diagnosis.filterCounts.find((c) => c.reason === "SPREAD_MAX_SKEW")).toBeUndefined();
  });
});
