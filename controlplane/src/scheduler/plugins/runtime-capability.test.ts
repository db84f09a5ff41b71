import { describe, expect, it } from "vitest";
import { compileRequest } from "../framework/compiled-request.js";
import type { PlacementRequest } from "../model/placement-request.js";
import type { SchedulerNode } from "../model/scheduler-node.js";
import { makeNode, makeRequest } from "../simulation/node-builder.js";
import { NodeClassRegistry } from "../snapshot/node-classes.js";
import { runtimeAndCapabilities } from "./runtime-capability.js";

const filter = runtimeAndCapabilities();

function verdict(node: Partial<SchedulerNode>, request: Partial<PlacementRequest>) {
  const compiled = compileRequest(makeRequest("w", request));
  const mask = filter.check(new NodeClassRegistry().classFor(makeNode("n1", node)), compiled);
  const reasons = filter.reasons.filter((_, i) => (mask >> i) & 1);
  return { reasons, subjects: reasons.map((_, i) => filter.subject?.(compiled, filter.reasons.indexOf(reasons[i]!))) };
}

describe("runtime-capability filter", () => {
  it.each([
    { name: "container on a container node passes", node: {}, request: {}, want: [] },
    { name: "vm needs the vm runtime", node: {}, request: { kind: "vm" as const }, want: ["RUNTIME_MISSING"] },
    {
      name: "vm with kvm on a kvm vm node passes",
      node: { runtimes: ["vm" as const], capabilities: ["kvm"] },
      request: { kind: "vm" as const, placement: { requiredCapabilities: ["kvm"] } },
      want: [],
    },
    {
      name: "missing kvm",
      node: { runtimes: ["vm" as const] },
      request: { kind: "vm" as const, placement: { requiredCapabilities: ["kvm"] } },
      want: ["CAPABILITY_MISSING"],
    },
    {
      name: "one of two capabilities missing",
      node: { capabilities: ["kvm"] },
      request: { placement: { requiredCapabilities: ["kvm", "gpu"] } },
      want: ["CAPABILITY_MISSING"],
    },
    {
      name: "arch in the allowed list",
      node: { arch: "arm64" },
      request: { placement: { arch: ["amd64", "arm64"] } },
      want: [],
    },
    {
      name: "arch not allowed",
      node: { arch: "arm64" },
      request: { placement: { arch: ["amd64"] } },
      want: ["ARCH_MISMATCH"],
    },
    { name: "no arch constraint allows any", node: { arch: "riscv64" }, request: {}, want: [] },
    {
      name: "all three at once",
      node: { arch: "arm64", runtimes: ["container" as const] },
      request: { kind: "vm" as const, placement: { requiredCapabilities: ["kvm"], arch: ["amd64"] } },
      want: ["RUNTIME_MISSING", "CAPABILITY_MISSING", "ARCH_MISMATCH"],
    },
  ])("$name", ({ node, request, want }) => {
    expect(verdict(node, request).reasons).toEqual(want);
  });

  it("names what is missing as the subject", () => {
    const { subjects } = verdict(
      { arch: "arm64" },
      { kind: "vm", placement: { requiredCapabilities: ["kvm"], arch: ["amd64"] } },
    );
    expect(subjects).toEqual(["vm", "kvm", "amd64"]);
  });
});
