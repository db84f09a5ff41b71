import { describe, expect, it } from "vitest";
import { compileRequest } from "../framework/compiled-request.js";
import type { PlacementRules } from "../model/placement-request.js";
import { makeNode, makeRequest } from "../simulation/node-builder.js";
import { NodeClassRegistry } from "../snapshot/node-classes.js";
import { nodeAffinity } from "./node-affinity.js";

const filter = nodeAffinity();

function reasons(labels: Record<string, string>, placement: PlacementRules): string[] {
  const mask = filter.check(
    new NodeClassRegistry().classFor(makeNode("n1", { labels })),
    compileRequest(makeRequest("w", { placement })),
  );
  return filter.reasons.filter((_, i) => (mask >> i) & 1);
}

interface Case {
  name: string;
  labels: Record<string, string>;
  placement: PlacementRules;
  want: string[];
}

describe("node-affinity filter", () => {
  const zoneA = { zone: "a", disk: "ssd" };
  it.each<Case>([
    { name: "no rules pass", labels: zoneA, placement: {}, want: [] },
    { name: "selector matches", labels: zoneA, placement: { nodeSelector: { zone: "a" } }, want: [] },
    {
      name: "selector value differs",
      labels: zoneA,
      placement: { nodeSelector: { zone: "b" } },
      want: ["NODE_SELECTOR_MISMATCH"],
    },
    {
      name: "selector key absent",
      labels: {},
      placement: { nodeSelector: { zone: "a" } },
      want: ["NODE_SELECTOR_MISMATCH"],
    },
    {
      name: "In matches one of the values",
      labels: zoneA,
      placement: { requiredAffinity: [{ key: "zone", operator: "In", values: ["b", "a"] }] },
      want: [],
    },
    {
      name: "NotIn rejects a listed value",
      labels: zoneA,
      placement: { requiredAffinity: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      want: ["NODE_AFFINITY_MISMATCH"],
    },
    {
      name: "NotIn accepts a missing key",
      labels: {},
      placement: { requiredAffinity: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      want: [],
    },
    {
      name: "Exists needs the key",
      labels: {},
      placement: { requiredAffinity: [{ key: "gpu", operator: "Exists" }] },
      want: ["NODE_AFFINITY_MISMATCH"],
    },
    {
      name: "DoesNotExist rejects the key",
      labels: { gpu: "yes" },
      placement: { requiredAffinity: [{ key: "gpu", operator: "DoesNotExist" }] },
      want: ["NODE_AFFINITY_MISMATCH"],
    },
    {
      name: "a prototype key is just a missing label",
      labels: {},
      placement: { nodeSelector: { constructor: "x" } },
      want: ["NODE_SELECTOR_MISMATCH"],
    },
    {
      name: "selector and affinity both fail and both count",
      labels: zoneA,
      placement: {
        nodeSelector: { zone: "b" },
        requiredAffinity: [{ key: "disk", operator: "In", values: ["hdd"] }],
      },
      want: ["NODE_SELECTOR_MISMATCH", "NODE_AFFINITY_MISMATCH"],
    },
  ])("$name", ({ labels, placement, want }) => {
    expect(reasons(labels, placement)).toEqual(want);
  });
});
