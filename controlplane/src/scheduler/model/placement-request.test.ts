import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { makeRequest, resources } from "../simulation/node-builder.js";
import { type PlacementRequest, validatePlacementRequest } from "./placement-request.js";

function violations(request: PlacementRequest): string[] {
  try {
    validatePlacementRequest(request);
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(PersysError);
    expect((e as PersysError).code).toBe("INVALID_SPEC");
    return (e as PersysError).details.map((d) => d.path);
  }
}

describe("validatePlacementRequest", () => {
  it.each([
    { name: "a minimal request", request: makeRequest("web"), want: [] },
    {
      name: "a full request",
      request: makeRequest("web-1", {
        kind: "vm",
        replicas: 3,
        resources: resources(2000, 4096, 20),
        labels: { tier: "db" },
        hostPorts: [{ port: 5432, protocol: "tcp" }],
        placement: {
          nodeSelector: { zone: "a" },
          requiredAffinity: [{ key: "disk", operator: "In", values: ["ssd"] }],
          preferredAffinity: [{ weight: 10, match: [{ key: "gpu", operator: "Exists" }] }],
          antiAffinity: { replicas: "required", workloads: [{ matchLabels: { tier: "batch" } }] },
          spread: [{ labelKey: "zone", maxSkew: 1 }],
          requiredCapabilities: ["kvm"],
          arch: ["amd64"],
        },
      }),
      want: [],
    },
    { name: "a bad workload id", request: makeRequest("Web_1"), want: ["workloadId"] },
    { name: "an unknown kind", request: makeRequest("w", { kind: "pod" as never }), want: ["kind"] },
    { name: "negative replicas", request: makeRequest("w", { replicas: -1 }), want: ["replicas"] },
    {
      name: "fractional and negative resources",
      request: makeRequest("w", { resources: { cpuMillicores: 0.5, memoryMiB: -1, diskGiB: 0 } }),
      want: ["resources.cpuMillicores", "resources.memoryMiB"],
    },
    {
      name: "a port out of range",
      request: makeRequest("w", { hostPorts: [{ port: 70000, protocol: "tcp" }] }),
      want: ["hostPorts[0].port"],
    },
    {
      name: "In without values and Exists with values",
      request: makeRequest("w", {
        placement: {
          requiredAffinity: [
            { key: "zone", operator: "In", values: [] },
            { key: "gpu", operator: "Exists", values: ["x"] },
          ],
        },
      }),
      want: ["placement.requiredAffinity[0].values", "placement.requiredAffinity[1].values"],
    },
    {
      name: "a weight outside 1..100",
      request: makeRequest("w", { placement: { preferredAffinity: [{ weight: 0, match: [] }] } }),
      want: ["placement.preferredAffinity[0].weight"],
    },
    {
      name: "maxSkew 0",
      request: makeRequest("w", { placement: { spread: [{ labelKey: "zone", maxSkew: 0 }] } }),
      want: ["placement.spread[0].maxSkew"],
    },
    {
      name: "an empty anti-affinity selector (it would match everything)",
      request: makeRequest("w", { placement: { antiAffinity: { workloads: [{}] } } }),
      want: ["placement.antiAffinity.workloads[0]"],
    },
  ])("$name", ({ request, want }) => {
    expect(violations(request)).toEqual(want);
  });
});
