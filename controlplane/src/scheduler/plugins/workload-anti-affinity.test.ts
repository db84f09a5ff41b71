import { describe, expect, it } from "vitest";
import type { LabelSelector } from "../model/label-selector.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import type { ReplicaPlacement } from "../snapshot/cluster-snapshot.js";
import { probeFilter, tally } from "../testing/probe-filter.js";

const nodes = [makeNode("a"), makeNode("b"), makeNode("c")];
function placed(
  workloadId: string,
  nodeId: string,
  labels: Record<string, string>,
  antiAffinity?: LabelSelector[],
): ReplicaPlacement {
  return {
    workloadId,
    replica: 0,
    nodeId,
    resources: resources(100, 128),
    labels,
    ...(antiAffinity ? { antiAffinity } : {}),
  };
}
const db = placed("db", "a", { tier: "db", app: "db" });
const cache = placed("cache", "b", { tier: "cache", app: "cache" });

interface Case {
  name: string;
  avoid: LabelSelector[];
  labels: Record<string, string>;
  placements: ReplicaPlacement[];
  want: Record<string, string[]>;
}

describe("workload-anti-affinity filter", () => {
  it.each<Case>([
    {
      name: "avoids nodes running a matched workload",
      avoid: [{ matchLabels: { tier: "db" } }],
      labels: { tier: "batch" },
      placements: [db, cache],
      want: { a: ["WORKLOAD_ANTI_AFFINITY"] },
    },
    {
      name: "matchExpressions with In over two values",
      avoid: [{ matchExpressions: [{ key: "tier", operator: "In", values: ["db", "cache"] }] }],
      labels: {},
      placements: [db, cache],
      want: { a: ["WORKLOAD_ANTI_AFFINITY"], b: ["WORKLOAD_ANTI_AFFINITY"] },
    },
    {
      name: "a selector without In or Exists (slow path) still matches",
      avoid: [{ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] }],
      labels: {},
      placements: [db, cache],
      want: { b: ["WORKLOAD_ANTI_AFFINITY"] },
    },
    {
      name: "symmetric: a placed workload that avoids this one keeps it off its node",
      avoid: [],
      labels: { tier: "db" },
      placements: [placed("batch", "c", { tier: "batch" }, [{ matchLabels: { tier: "db" } }])],
      want: { c: ["AVOIDED_BY_WORKLOAD"] },
    },
    {
      name: "both directions on one node count under both reasons",
      avoid: [{ matchLabels: { tier: "batch" } }],
      labels: { tier: "db" },
      placements: [placed("batch", "c", { tier: "batch" }, [{ matchLabels: { tier: "db" } }])],
      want: { c: ["WORKLOAD_ANTI_AFFINITY", "AVOIDED_BY_WORKLOAD"] },
    },
    {
      name: "a workload never avoids its own replicas here",
      avoid: [{ matchLabels: { tier: "db" } }],
      labels: { tier: "db" },
      placements: [placed("self", "a", { tier: "db" }, [{ matchLabels: { tier: "db" } }])],
      want: {},
    },
  ])("$name", ({ avoid, labels, placements, want }) => {
    const request = makeRequest("self", { labels, placement: { antiAffinity: { workloads: avoid } } });
    const { perNode, counts } = probeFilter("workload-anti-affinity", nodes, request, placements);
    const expected = { a: [], b: [], c: [], ...want };
    expect(perNode).toEqual(expected);
    expect(counts).toEqual(tally(expected));
  });

  it("names the workload behind a rejection", () => {
    const request = makeRequest("self", {
      placement: { antiAffinity: { workloads: [{ matchLabels: { tier: "db" } }] } },
    });
    const { engine } = probeFilter("workload-anti-affinity", nodes, request, [db]);
    expect(engine.explainNode(request, "a").statuses).toEqual([
      { plugin: "workload-anti-affinity", reason: "WORKLOAD_ANTI_AFFINITY", detail: { subject: "db" } },
    ]);
  });

  it("frees the node once the avoided workload is released", () => {
    const request = makeRequest("self", {
      placement: { antiAffinity: { workloads: [{ matchLabels: { tier: "db" } }] } },
    });
    const { engine } = probeFilter("workload-anti-affinity", nodes, request, [db]);
    engine.snapshot.release("db", 0);
    expect(engine.explainNode(request, "a").feasible).toBe(true);
  });
});
