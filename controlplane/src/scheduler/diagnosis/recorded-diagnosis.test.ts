import { describe, expect, it } from "vitest";
import { SchedulerEngine } from "../scheduler-engine.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";
import { renderDiagnosisMessage } from "./diagnosis-message.js";

function engineWith(count: number): SchedulerEngine {
  const snapshot = new ClusterSnapshot();
  for (let i = 0; i < count; i++) {
    snapshot.upsertNode(
      makeNode(`n${i}`, {
        ready: i !== 0,
        cordoned: i === 0 || i === 1,
        labels: { zone: i % 2 === 0 ? "a" : "b" },
        allocatable: resources(i < 4 ? 500 : 4000, 8192, 100),
      }),
    );
  }
  return new SchedulerEngine(snapshot, { seed: 3, clock: () => Date.UTC(2030, 0, 2, 3, 4, 5) });
}

describe("recorded diagnoses", () => {
  it("record the structure of a placement: counts, candidates with every scorer, the winner", () => {
    const d = engineWith(10).plan(makeRequest("web", { resources: resources(1000, 512) })).decisions[0]!.diagnosis;
    expect(d.nodesEvaluated).toBe(10);
    expect(d.feasibleNodes).toBe(6);
    expect(d.scoredNodes).toBe(6);
    expect(d.filterCounts).toEqual([
      { plugin: "resources-fit", reason: "INSUFFICIENT_CPU", count: 4 },
      { plugin: "node-ready", reason: "NODE_CORDONED", count: 2 },
      { plugin: "node-ready", reason: "NODE_NOT_READY", count: 1 },
    ]);
    expect(d.exhaustion).toEqual([
      { dimension: "cpu", needed: 1000, bestAvailable: 500, unit: "millicores", nodesShort: 4 },
    ]);
    expect(d.candidates).toHaveLength(3);
    expect(d.candidates[0]!.scores.map((s) => [s.plugin, s.weight])).toEqual([
      ["least-allocated", 1],
      ["measured-utilisation", 1],
    ]);
    expect(d.winner).toBe(d.candidates[0]!.nodeId);
    expect(d.decidedAt).toBe("2030-01-02T03:04:05.000Z");
  });

  it("serialise to the plain PlacementDiagnosis shape and render the same message from it", () => {
    const d = engineWith(6).plan(makeRequest("web", { resources: resources(9000, 512) })).decisions[0]!.diagnosis;
    const plain = JSON.parse(JSON.stringify(d));
    expect(Object.keys(plain).sort()).toEqual(
      [
        "candidates",
        "decidedAt",
        "exhaustion",
        "feasibleNodes",
        "filterCounts",
        "generation",
        "message",
        "nodes",
        "nodesEvaluated",
        "replica",
        "scoredNodes",
        "winner",
        "workloadId",
      ].sort(),
    );
    expect(plain).toEqual(d.toJSON());
    expect(plain.winner).toBeNull();
    expect(renderDiagnosisMessage(plain)).toBe(d.message);
  });

  it("order equal counts by reason code", () => {
    const d = engineWith(6).plan(
      makeRequest("web", { resources: resources(100, 512), placement: { nodeSelector: { zone: "c" } } }),
    ).decisions[0]!.diagnosis;
    const reasons = d.filterCounts.map((c) => `${c.count} ${c.reason}`);
    expect(reasons).toEqual(["6 NODE_SELECTOR_MISMATCH", "2 NODE_CORDONED", "1 NODE_NOT_READY"]);
  });

  it("stay small: an unschedulable and a placed diagnosis are well under a kilobyte of JSON, besides the bounded node record", () => {
    const engine = engineWith(10);
    for (const r of [resources(9000, 1), resources(100, 1)]) {
      const d = engine.plan(makeRequest("web", { resources: r })).decisions[0]!.diagnosis;
      expect(JSON.stringify({ ...d.toJSON(), nodes: [] }).length).toBeLessThan(1024);
      // Every one of the 10 nodes recorded, each with every filter it failed (see node-verdicts.test.ts for 1,000).
      expect(JSON.stringify(d).length).toBeLessThan(4096);
    }
  });
});
