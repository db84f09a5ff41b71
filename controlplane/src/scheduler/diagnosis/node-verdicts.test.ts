import { describe, expect, it } from "vitest";
import { SchedulerEngine } from "../scheduler-engine.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";
import {
  MAX_FEASIBLE_VERDICTS,
  MAX_NODE_VERDICTS,
  MAX_PLACED_VERDICTS,
  MAX_RECORDED_FAILURES,
  renderFilterDetail,
} from "./node-verdicts.js";
import type { PlacementDiagnosis } from "./placement-diagnosis.js";

/** n0 down and cordoned, n1 cordoned, n0..n3 with 500m of cpu, the rest with 4000m. */
function engineWith(count: number, small = 4): SchedulerEngine {
  const snapshot = new ClusterSnapshot();
  for (let i = 0; i < count; i++) {
    snapshot.upsertNode(
      makeNode(`n${i}`, {
        ready: i !== 0,
        cordoned: i === 0 || i === 1,
        allocatable: resources(i < small ? 500 : 4000, 8192, 100),
      }),
    );
  }
  return new SchedulerEngine(snapshot, { seed: 3, clock: () => Date.UTC(2030, 0, 2, 3, 4, 5) });
}

/** Per "plugin reason", how many recorded nodes failed it. */
function tally(d: PlacementDiagnosis): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of d.nodes)
    for (const f of v.failures) out[`${f.plugin} ${f.reason}`] = (out[`${f.plugin} ${f.reason}`] ?? 0) + 1;
  return out;
}

describe("recorded node verdicts", () => {
  it("record every node of a small cluster, candidates first, and agree with the counts", () => {
    const d = engineWith(10).plan(makeRequest("web", { resources: resources(1000, 512) })).decisions[0]!.diagnosis;
    expect(d.nodes).toHaveLength(10);
    expect(d.nodes.slice(0, 3).map((v) => v.nodeId)).toEqual(d.candidates.map((c) => c.nodeId));
    expect(d.nodes[0]!.nodeId).toBe(d.winner);
    expect(d.nodes.slice(0, 6).every((v) => v.feasible && v.failures.length === 0)).toBe(true);
    expect(d.nodes.slice(6).map((v) => v.nodeId)).toEqual(["n0", "n1", "n2", "n3"]);
    const expected = Object.fromEntries(d.filterCounts.map((c) => [`${c.plugin} ${c.reason}`, c.count]));
    expect(tally(d)).toEqual(expected);
  });

  it("keep every failing filter of a node with the numbers the filter computed", () => {
    const d = engineWith(10).plan(makeRequest("web", { resources: resources(1000, 512) })).decisions[0]!.diagnosis;
    const n0 = d.nodes.find((v) => v.nodeId === "n0")!;
    expect(n0.feasible).toBe(false);
    expect(n0.failures.map((f) => f.reason).sort()).toEqual(["INSUFFICIENT_CPU", "NODE_CORDONED", "NODE_NOT_READY"]);
    const cpu = n0.failures.find((f) => f.reason === "INSUFFICIENT_CPU")!;
    expect(cpu).toMatchObject({
      plugin: "resources-fit",
      detail: { requested: 1000, free: 500, allocatable: 500, unit: "millicores" },
    });
    expect(renderFilterDetail(cpu.detail)).toBe("need 1000m, free 500m of 500m");
  });

  it("survive JSON and forReplica", () => {
    const d = engineWith(6).plan(makeRequest("web", { resources: resources(9000, 512) })).decisions[0]!.diagnosis;
    const plain = JSON.parse(JSON.stringify(d)) as PlacementDiagnosis;
    expect(plain.nodes).toEqual(d.nodes);
    expect(d.forReplica(1).nodes).toEqual(d.nodes);
    expect(plain.nodes.every((v) => !v.feasible)).toBe(true);
  });

  it.each([
    ["a placement", 1000],
    ["a refusal", 9000],
  ])("stay bounded on a 1,000-node cluster: %s", (_name, cpu) => {
    const engine = engineWith(1000, 400);
    const d = engine.plan(
      makeRequest("web", { resources: resources(cpu, 512), hostPorts: [{ port: 8080, protocol: "tcp" }] }),
    ).decisions[0]!.diagnosis;
    expect(d.nodes.length).toBeLessThanOrEqual(MAX_NODE_VERDICTS);
    expect(d.nodes.reduce((sum, v) => sum + v.failures.length, 0)).toBeLessThanOrEqual(MAX_RECORDED_FAILURES);
    if (d.winner) {
      const feasible = d.nodes.filter((v) => v.feasible);
      expect(d.nodes[0]!.nodeId).toBe(d.winner);
      // A few scored nodes first (the candidates lead), then the room goes to refused nodes.
      expect(feasible).toHaveLength(Math.min(MAX_FEASIBLE_VERDICTS, d.feasibleNodes));
      expect(d.nodes.slice(0, feasible.length)).toEqual(feasible);
      expect(d.nodes.length).toBe(Math.min(MAX_PLACED_VERDICTS, feasible.length + d.nodesEvaluated - d.feasibleNodes));
    } else expect(d.nodes.every((v) => !v.feasible)).toBe(true);
    // The whole plain diagnosis, as JSON: the stored form is about this size (proto JSON) or smaller (binary).
    const bytes = Buffer.byteLength(JSON.stringify(d));
    expect(bytes).toBeLessThan(16 * 1024);
  });
});
