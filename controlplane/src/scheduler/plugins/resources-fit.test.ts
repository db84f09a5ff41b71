import { describe, expect, it } from "vitest";
import type { Resources } from "../model/resources.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import type { ReplicaPlacement } from "../snapshot/cluster-snapshot.js";
import { probeFilter, tally } from "../testing/probe-filter.js";

const nodes = [
  makeNode("big", { allocatable: resources(8000, 16384, 200) }),
  makeNode("mid", { allocatable: resources(4000, 4096, 100) }),
  makeNode("small", { allocatable: resources(1000, 1024, 10) }),
];

function hold(nodeId: string, r: Resources): ReplicaPlacement {
  return { workloadId: `filler-${nodeId}`, replica: 0, nodeId, resources: r };
}

describe("resources-fit filter", () => {
  it.each([
    { name: "everything fits a small request", need: resources(500, 512, 5), placed: [], want: {} },
    {
      name: "one dimension short on one node",
      need: resources(500, 2048, 5),
      placed: [],
      want: { small: ["INSUFFICIENT_MEMORY"] },
    },
    {
      name: "short on several dimensions counts each",
      need: resources(2000, 2048, 50),
      placed: [],
      want: { small: ["INSUFFICIENT_CPU", "INSUFFICIENT_MEMORY", "INSUFFICIENT_DISK"] },
    },
    {
      name: "reservations, not capacity, decide",
      need: resources(4000, 1024, 0),
      placed: [hold("big", resources(5000, 0, 0))],
      want: { big: ["INSUFFICIENT_CPU"], small: ["INSUFFICIENT_CPU"] },
    },
    {
      name: "a request exactly equal to free fits",
      need: resources(4000, 4096, 100),
      placed: [],
      want: { small: ["INSUFFICIENT_CPU", "INSUFFICIENT_MEMORY", "INSUFFICIENT_DISK"] },
    },
    {
      name: "a dimension not requested never fails, even over-committed",
      need: resources(100, 0, 0),
      placed: [hold("mid", resources(0, 8192, 0))],
      want: {},
    },
  ])("$name", ({ need, placed, want }) => {
    const { perNode, counts } = probeFilter("resources-fit", nodes, makeRequest("w", { resources: need }), placed);
    const expected = { big: [], mid: [], small: [], ...want };
    expect(perNode).toEqual(expected);
    expect(counts).toEqual(tally(expected));
  });

  it("reports per dimension how many nodes are short and the most any of them has free", () => {
    const { diagnosis } = probeFilter("resources-fit", nodes, makeRequest("w", { resources: resources(3000, 8192) }), [
      hold("mid", resources(1000, 1024, 0)),
    ]);
    expect(diagnosis.exhaustion).toEqual([
      { dimension: "cpu", needed: 3000, bestAvailable: 1000, unit: "millicores", nodesShort: 1 },
      { dimension: "memory", needed: 8192, bestAvailable: 3072, unit: "MiB", nodesShort: 2 },
    ]);
  });

  it("gives requested, free, allocatable and capacity for a rejection", () => {
    const { engine } = probeFilter("resources-fit", nodes, makeRequest("w"), []);
    const explanation = engine.explainNode(makeRequest("w", { resources: resources(100, 2048) }), "small");
    expect(explanation.statuses).toEqual([
      {
        plugin: "resources-fit",
        reason: "INSUFFICIENT_MEMORY",
        detail: { requested: 2048, free: 1024, allocatable: 1024, capacity: 1024, unit: "MiB" },
      },
    ]);
  });
});
