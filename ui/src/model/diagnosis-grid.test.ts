import { describe, expect, it } from "vitest";
import type { NodeJson, WorkloadJson } from "../api/wire-types.js";
import { buildDiagnosisGrid, gridFilters, matchesExpression, scoreBreakdown } from "./diagnosis-grid.js";

const node = (id: string, extra: Partial<NodeJson> = {}): NodeJson => ({
  id,
  state: "NODE_STATE_READY",
  allocatable: { cpuMillicores: 4000, memoryMib: 8192, diskGib: 100 },
  allocated: { cpuMillicores: 0, memoryMib: 0, diskGib: 0 },
  supportedKinds: ["WORKLOAD_KIND_CONTAINER"],
  capabilities: ["docker"],
  arch: "amd64",
  labels: { zone: "a" },
  ...extra,
});

const workload: WorkloadJson = {
  id: "web",
  kind: "WORKLOAD_KIND_CONTAINER",
  resources: { cpuMillicores: 500, memoryMib: 1024 },
  container: { image: "x", ports: [{ containerPort: 80, hostPort: 8080 }] },
};

const column = (label: string) => gridFilters.findIndex((f) => f.label === label);

describe("buildDiagnosisGrid", () => {
  const cases: {
    name: string;
    node: NodeJson;
    workload?: WorkloadJson;
    failing: string[];
    detail?: [string, RegExp];
  }[] = [
    { name: "a ready node with room passes every filter", node: node("n"), failing: [] },
    { name: "not ready", node: node("n", { state: "NODE_STATE_NOT_READY" }), failing: ["ready"] },
    { name: "cordoned", node: node("n", { cordoned: true }), failing: ["ready"], detail: ["ready", /cordoned/] },
    {
      name: "memory short, with the numbers",
      node: node("n", { allocated: { memoryMib: 7680 } }),
      failing: ["memory"],
      detail: ["memory", /need 1024 MiB, free 512 MiB of 8192 MiB/],
    },
    {
      name: "cpu and memory short: both counted",
      node: node("n", { allocatable: { cpuMillicores: 100, memoryMib: 100, diskGib: 1 } }),
      failing: ["cpu", "memory"],
    },
    {
      name: "missing capability kvm",
      node: node("n"),
      workload: { ...workload, placement: { requiredCapabilities: ["kvm"] } },
      failing: ["runtime / capabilities"],
      detail: ["runtime / capabilities", /missing kvm/],
    },
    {
      name: "no vm runtime",
      node: node("n"),
      workload: { ...workload, kind: "WORKLOAD_KIND_VM" },
      failing: ["runtime / capabilities"],
    },
    {
      name: "node selector mismatch",
      node: node("n"),
      workload: { ...workload, placement: { nodeSelector: { zone: "b" } } },
      failing: ["selector / affinity"],
      detail: ["selector / affinity", /zone=a, need b/],
    },
    {
      name: "arch mismatch",
      node: node("n", { arch: "arm64" }),
      workload: { ...workload, placement: { arch: "amd64" } },
      failing: ["runtime / capabilities"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const grid = buildDiagnosisGrid({ workload: c.workload ?? workload, nodes: [c.node] });
      const row = grid.rows[0]!;
      const failing = row.cells.flatMap((cell, i) => (cell.pass ? [] : [gridFilters[i]!.label]));
      expect(failing).toEqual(c.failing);
      expect(row.feasible).toBe(c.failing.length === 0);
      if (c.detail) expect(row.cells[column(c.detail[0])]!.detail).toMatch(c.detail[1]);
    });
  }

  it("puts the winner first, then candidates by rank, feasible, then failing; counts failures per column", () => {
    const grid = buildDiagnosisGrid({
      workload,
      nodes: [node("a"), node("b", { state: "NODE_STATE_LOST" }), node("c"), node("d")],
      diagnosis: {
        winnerNodeId: "d",
        candidates: [
          { nodeId: "d", totalScore: 90 },
          { nodeId: "c", totalScore: 80 },
        ],
      },
    });
    expect(grid.rows.map((r) => r.nodeId)).toEqual(["d", "c", "a", "b"]);
    expect(grid.rows[0]!.winner).toBe(true);
    expect(grid.rows[1]!.totalScore).toBe(80);
    expect(grid.failuresPerColumn[column("ready")]).toBe(1);
    expect(grid.feasibleCount).toBe(3);
  });

  it("does not count a placed replica's own reservation against its node", () => {
    const placed: WorkloadJson = { ...workload, status: { replicas: [{ index: 0, nodeId: "n" }] } };
    const full = node("n", {
      allocatable: { cpuMillicores: 500, memoryMib: 1024 },
      allocated: { cpuMillicores: 500, memoryMib: 1024 },
    });
    const grid = buildDiagnosisGrid({ workload: placed, nodes: [full], replicaIndex: 0 });
    expect(grid.rows[0]!.feasible).toBe(true);
  });

  it("reads replica 0 without an index field (proto3 JSON omits zeros)", () => {
    const placed: WorkloadJson = { ...workload, status: { replicas: [{ nodeId: "n" }] } };
    const full = node("n", {
      allocatable: { cpuMillicores: 500, memoryMib: 1024 },
      allocated: { cpuMillicores: 500, memoryMib: 1024 },
    });
    expect(buildDiagnosisGrid({ workload: placed, nodes: [full], replicaIndex: 0 }).rows[0]!.feasible).toBe(true);
  });

  it("host ports in use by another workload's replica fail that node", () => {
    const other: WorkloadJson = {
      id: "other",
      container: { ports: [{ containerPort: 1, hostPort: 8080 }] },
      status: { replicas: [{ index: 0, nodeId: "a" }] },
    };
    const grid = buildDiagnosisGrid({ workload, nodes: [node("a"), node("b")], workloads: [other] });
    const a = grid.rows.find((r) => r.nodeId === "a")!;
    expect(a.cells[column("host ports")]).toEqual({ pass: false, detail: "in use: 8080" });
    expect(grid.rows.find((r) => r.nodeId === "b")!.feasible).toBe(true);
  });

  it("required replica anti-affinity fails nodes that hold a sibling", () => {
    const spread: WorkloadJson = {
      ...workload,
      placement: { replicaAntiAffinity: { enforcement: "ENFORCEMENT_REQUIRED" } },
      status: { replicas: [{ index: 0, nodeId: "a" }, { index: 1 }] },
    };
    const grid = buildDiagnosisGrid({ workload: spread, nodes: [node("a"), node("b")], replicaIndex: 1 });
    expect(grid.rows.find((r) => r.nodeId === "a")!.cells[column("replica anti-affinity")]!.pass).toBe(false);
    expect(grid.rows.find((r) => r.nodeId === "b")!.feasible).toBe(true);
  });
});

describe("matchesExpression", () => {
  const labels = { zone: "a", ssd: "true" };
  it.each([
    ["IN hit", { key: "zone", operator: "LABEL_OPERATOR_IN", values: ["a", "b"] }, true],
    ["IN miss", { key: "zone", operator: "LABEL_OPERATOR_IN", values: ["c"] }, false],
    ["NOT_IN absent key", { key: "rack", operator: "LABEL_OPERATOR_NOT_IN", values: ["x"] }, true],
    ["EXISTS", { key: "ssd", operator: "LABEL_OPERATOR_EXISTS" }, true],
    ["DOES_NOT_EXIST", { key: "ssd", operator: "LABEL_OPERATOR_DOES_NOT_EXIST" }, false],
  ])("%s", (_name, expression, expected) => {
    expect(matchesExpression(labels, expression)).toBe(expected);
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
