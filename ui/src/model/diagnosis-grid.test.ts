import { describe, expect, it } from "vitest";
import type { FilterFailureJson, NodeVerdictJson, PlacementDiagnosisJson } from "../api/wire-types.js";
import { buildDiagnosisGrid, failureText, scoreBreakdown } from "./diagnosis-grid.js";

const fail = (plugin: string, reason: string, detail?: string): FilterFailureJson =>
  detail ? { plugin, reason, detail } : { plugin, reason };
/** A verdict as proto3 JSON sends it: `feasible: false` and empty failures omitted. */
const verdict = (nodeId: string, ...failures: FilterFailureJson[]): NodeVerdictJson =>
  failures.length ? { nodeId, failures } : { nodeId, feasible: true };

const labels = (d: PlacementDiagnosisJson) => buildDiagnosisGrid(d).columns.map((c) => c.label);
const failing = (d: PlacementDiagnosisJson, row = 0) => {
  const grid = buildDiagnosisGrid(d);
  return grid.rows[row]!.cells.flatMap((cell, i) => (cell.pass ? [] : [[grid.columns[i]!.label, cell.detail]]));
};

describe("buildDiagnosisGrid", () => {
  const cases: { name: string; node: NodeVerdictJson; failing: string[][] }[] = [
    { name: "a feasible node passes every column", node: verdict("n"), failing: [] },
    {
      name: "memory short, with the recorded numbers",
      node: verdict("n", fail("resources-fit", "INSUFFICIENT_MEMORY", "need 1024 MiB, free 512 MiB of 8192 MiB")),
      failing: [["memory", "need 1024 MiB, free 512 MiB of 8192 MiB"]],
    },
    {
      name: "every failing filter of a node is its own ✗",
      node: verdict(
        "n",
        fail("node-ready", "NODE_NOT_READY"),
        fail("node-ready", "NODE_CORDONED"),
        fail("runtime-capability", "CAPABILITY_MISSING", "kvm"),
        fail("resources-fit", "INSUFFICIENT_CPU", "need 500m, free 100m of 100m"),
        fail("resources-fit", "INSUFFICIENT_MEMORY", "need 1024 MiB, free 100 MiB of 100 MiB"),
      ),
      failing: [
        ["ready", "node not ready; node cordoned"],
        ["runtime / capabilities", "capability missing: kvm"],
        ["cpu", "need 500m, free 100m of 100m"],
        ["memory", "need 1024 MiB, free 100 MiB of 100 MiB"],
      ],
    },
    {
      name: "host port in use",
      node: verdict("n", fail("host-ports", "HOST_PORT_IN_USE", "tcp/8080")),
      failing: [["host ports", "host port in use: tcp/8080"]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = { nodesEvaluated: 1, nodes: [c.node] };
      expect(failing(d)).toEqual(c.failing);
      expect(buildDiagnosisGrid(d).rows[0]!.feasible).toBe(c.failing.length === 0);
    });
  }

  it("shows the core columns always and the others only when a recorded node fails them", () => {
    const core = ["ready", "runtime / capabilities", "selector / affinity", "cpu", "memory", "disk"];
    expect(labels({ nodes: [verdict("a")] })).toEqual([...core, "host ports", "replica anti-affinity"]);
    const spread = { nodes: [verdict("a", fail("topology-spread", "SPREAD_MAX_SKEW", "zone maxSkew 1"))] };
    expect(labels(spread)).toEqual([
      ...core.slice(0, 3),
      "spread",
      ...core.slice(3),
      "host ports",
      "replica anti-affinity",
    ]);
    expect(failing(spread)).toEqual([["spread", "spread max skew: zone maxSkew 1"]]);
    const unknown = { nodes: [verdict("a", fail("gpu-fit", "NO_GPU"))] };
    expect(labels(unknown).at(-1)).toBe("gpu-fit");
    expect(failing(unknown)).toEqual([["gpu-fit", "no gpu"]]);
  });

  it("keeps the recorded order, marks the winner and candidates, counts failures per column", () => {
    const grid = buildDiagnosisGrid({
      nodesEvaluated: 1000,
      winnerNodeId: "d",
      candidates: [
        { nodeId: "d", totalScore: 90 },
        { nodeId: "c", totalScore: 80 },
      ],
      nodes: [
        verdict("d"),
        verdict("c"),
        verdict("a"),
        verdict("b", fail("node-ready", "NODE_NOT_READY")),
        verdict("e", fail("node-ready", "NODE_DRAINING"), fail("resources-fit", "INSUFFICIENT_DISK", "need 9 GiB")),
      ],
    });
    expect(grid.rows.map((r) => r.nodeId)).toEqual(["d", "c", "a", "b", "e"]);
    expect(grid.rows[0]).toMatchObject({ winner: true, candidateRank: 0, totalScore: 90 });
    expect(grid.rows[1]).toMatchObject({ winner: false, candidateRank: 1, totalScore: 80 });
    expect(grid.rows[2]!.candidateRank).toBeUndefined();
    const col = (label: string) => grid.columns.findIndex((c) => c.label === label);
    expect(grid.failuresPerColumn[col("ready")]).toBe(2);
    expect(grid.failuresPerColumn[col("disk")]).toBe(1);
    expect(grid.feasibleCount).toBe(3);
    expect(grid.unrecorded).toBe(995);
  });

  it("has no rows without a diagnosis or without recorded nodes", () => {
    expect(buildDiagnosisGrid(undefined).rows).toEqual([]);
    expect(buildDiagnosisGrid({ nodesEvaluated: 3 })).toMatchObject({ rows: [], unrecorded: 3 });
  });
});

describe("failureText", () => {
  it.each([
    ["resources: the numbers alone", fail("resources-fit", "INSUFFICIENT_CPU", "need 1m, free 0m"), "need 1m, free 0m"],
    ["a subject after the reason", fail("runtime-capability", "CAPABILITY_MISSING", "kvm"), "capability missing: kvm"],
    ["the reason alone", fail("node-ready", "NODE_CORDONED"), "node cordoned"],
  ])("%s", (_name, f, text) => {
    expect(failureText(f)).toBe(text);
  });
});

describe("scoreBreakdown", () => {
  it("gives each scorer's weighted part, best candidates first", () => {
    const out = scoreBreakdown({
      candidates: [{ nodeId: "a", totalScore: 70, scores: [{ plugin: "least-allocated", score: 70, weight: 1 }] }],
    });
    expect(out).toEqual([
      { nodeId: "a", total: 70, parts: [{ plugin: "least-allocated", score: 70, weight: 1, weighted: 70 }] },
    ]);
  });
});
