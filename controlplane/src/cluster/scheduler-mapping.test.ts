import { api } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { MAX_FEASIBLE_VERDICTS, MAX_PLACED_VERDICTS, SchedulerEngine } from "../scheduler/index.js";
import { makeNode, makeRequest, resources } from "../scheduler/simulation/index.js";
import { ClusterSnapshot } from "../scheduler/snapshot/cluster-snapshot.js";
import { apiDiagnosis } from "./scheduler-mapping.js";

/** 1,000 nodes: n0 down and cordoned, n1 cordoned, n0..n399 with 500m of cpu, the rest with 4000m. */
function engine(): SchedulerEngine {
  const snapshot = new ClusterSnapshot();
  for (let i = 0; i < 1000; i++) {
    snapshot.upsertNode(
      makeNode(`node-${String(i).padStart(4, "0")}`, {
        ready: i !== 0,
        cordoned: i < 2,
        labels: { zone: `z${i % 3}` },
        allocatable: resources(i < 400 ? 500 : 4000, 8192, 100),
      }),
    );
  }
  return new SchedulerEngine(snapshot, { seed: 3 });
}

describe("apiDiagnosis", () => {
  const request = (cpu: number) =>
    makeRequest("web", {
      resources: resources(cpu, 9000, 200),
      hostPorts: [{ port: 8080, protocol: "tcp" }],
      placement: { requiredCapabilities: ["kvm"] },
    });

  it("carries the recorded nodes with their failures and the numbers as text", () => {
    const d = apiDiagnosis(engine().plan(request(1000)).decisions[0]!.diagnosis);
    // Every node fails four to six filters here: the 128-failure budget stops the record at 31 nodes.
    expect(d.nodes).toHaveLength(31);
    expect(d.nodes.reduce((sum, v) => sum + v.failures.length, 0)).toBeLessThanOrEqual(128);
    const first = d.nodes[0]!;
    expect(first.feasible).toBe(false);
    expect(first.failures).toContainEqual({
      plugin: "resources-fit",
      reason: "INSUFFICIENT_MEMORY",
      detail: "need 9000 MiB, free 8192 MiB of 8192 MiB",
    });
    expect(first.failures).toContainEqual({
      plugin: "runtime-capability",
      reason: "CAPABILITY_MISSING",
      detail: "kvm",
    });
  });

  it("keeps a 1,000-node cluster's diagnosis under 10 KiB (binary) and 16 KiB (JSON), as stored", () => {
    for (const cpu of [1000, 100]) {
      const d = apiDiagnosis(engine().plan(request(cpu)).decisions[0]!.diagnosis);
      const binary = api.PlacementDiagnosis.encode(d).finish().length;
      const json = JSON.stringify(api.PlacementDiagnosis.toJSON(d)).length;
      expect(binary).toBeLessThan(10 * 1024);
      expect(json).toBeLessThan(16 * 1024);
    }
    const placed = apiDiagnosis(
      engine().plan(makeRequest("web", { resources: resources(1000, 512) })).decisions[0]!.diagnosis,
    );
    // A few feasible nodes, the winner first; the rest of the record says why the refused ones were not chosen.
    expect(placed.nodes.filter((v) => v.feasible)).toHaveLength(MAX_FEASIBLE_VERDICTS);
    expect(placed.nodes[0]!.nodeId).toBe(placed.winnerNodeId);
    expect(placed.nodes).toHaveLength(MAX_PLACED_VERDICTS);
    expect(placed.nodes.slice(MAX_FEASIBLE_VERDICTS).every((v) => !v.feasible && v.failures.length > 0)).toBe(true);
    expect(api.PlacementDiagnosis.encode(placed).finish().length).toBeLessThan(1.5 * 1024);
  });
});
