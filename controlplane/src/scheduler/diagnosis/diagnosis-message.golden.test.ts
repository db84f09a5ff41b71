import { describe, expect, it } from "vitest";
import { SchedulerEngine } from "../scheduler-engine.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";

// The one test that pins the wording of diagnoses. Every other test asserts on the structure.
describe("diagnosis wording (golden)", () => {
  it("renders unschedulable and placed decisions for people", () => {
    const snapshot = new ClusterSnapshot();
    for (let i = 1; i <= 12; i++) {
      const kvm = i <= 7;
      snapshot.upsertNode(
        makeNode(`n${i}`, {
          runtimes: ["container", "vm"],
          capabilities: kvm ? ["kvm"] : [],
          allocatable: resources(8000, kvm ? 1536 : 8192, 100),
        }),
      );
      // Load the nodes unevenly so scores differ: n12 is the emptiest.
      snapshot.reserve({
        workloadId: `load-${i}`,
        replica: 0,
        nodeId: `n${i}`,
        resources: resources(6000 - i * 400, 0),
      });
    }
    const engine = new SchedulerEngine(snapshot, { seed: 1, clock: () => 0 });

    const vm = makeRequest("db", {
      kind: "vm",
      resources: resources(1000, 2048, 10),
      placement: { requiredCapabilities: ["kvm"] },
    });
    expect(engine.plan(vm).decisions[0]!.diagnosis.message).toBe(
      "0/12 nodes are available: 7 insufficient memory (need 2048 MiB, most free 1536 MiB), 5 missing capability kvm.",
    );

    const web = makeRequest("web", { resources: resources(1000, 1024, 10) });
    expect(engine.plan(web).decisions[0]!.diagnosis.message).toBe(
      "placed on n12 (score 67): 12/12 nodes feasible; top: n12 67, n11 66, n10 65",
    );
  });
});
