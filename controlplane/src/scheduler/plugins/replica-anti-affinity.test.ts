import { describe, expect, it } from "vitest";
import type { ReplicaAntiAffinity } from "../model/placement-request.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import { probeFilter, tally } from "../testing/probe-filter.js";

const nodes = [makeNode("a"), makeNode("b"), makeNode("c")];
const sibling = (replica: number, nodeId: string) => ({
  workloadId: "web",
  replica,
  nodeId,
  resources: resources(100, 128),
});

interface Case {
  name: string;
  mode: ReplicaAntiAffinity;
  placed: ReturnType<typeof sibling>[];
  want: Record<string, string[]>;
}

describe("replica-anti-affinity filter", () => {
  it.each<Case>([
    {
      name: "required: a node with a sibling is out",
      mode: "required",
      placed: [sibling(0, "a")],
      want: { a: ["REPLICA_ANTI_AFFINITY"] },
    },
    {
      name: "required: every node with a sibling is out",
      mode: "required",
      placed: [sibling(0, "a"), sibling(1, "c")],
      want: { a: ["REPLICA_ANTI_AFFINITY"], c: ["REPLICA_ANTI_AFFINITY"] },
    },
    { name: "preferred (default) only scores", mode: "preferred", placed: [sibling(0, "a")], want: {} },
    { name: "none ignores siblings", mode: "none", placed: [sibling(0, "a")], want: {} },
    { name: "no siblings yet: nothing to avoid", mode: "required", placed: [], want: {} },
  ] as const)("$name", ({ mode, placed, want }) => {
    const request = makeRequest("web", {
      replicas: 3,
      placement: { antiAffinity: { replicas: mode as ReplicaAntiAffinity } },
    });
    const { perNode, counts } = probeFilter("replica-anti-affinity", nodes, request, placed);
    const expected = { a: [], b: [], c: [], ...want };
    expect(perNode).toEqual(expected);
    expect(counts).toEqual(tally(expected));
  });

  it("with required, replicas beyond the node count stay pending", () => {
    const { engine } = probeFilter("replica-anti-affinity", nodes, makeRequest("x"));
    const result = engine.place(
      makeRequest("web", { replicas: 4, placement: { antiAffinity: { replicas: "required" } } }),
    );
    const placed = result.decisions.filter((d) => d.nodeId !== null).map((d) => d.nodeId);
    expect(new Set(placed).size).toBe(3);
    expect(result.decisions[3]!.nodeId).toBeNull();
    expect(result.decisions[3]!.diagnosis.filterCounts).toEqual([
      { plugin: "replica-anti-affinity", reason: "REPLICA_ANTI_AFFINITY", count: 3 },
    ]);
  });
});
