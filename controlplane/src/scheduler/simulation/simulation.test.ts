import { describe, expect, it } from "vitest";
import { validatePlacementRequest } from "../model/placement-request.js";
import { validateNode } from "../model/scheduler-node.js";
import { generateCluster, simLabels, zoneNames } from "./cluster-generator.js";
import { SeededRandom } from "./seeded-random.js";
import { generateWorkloads } from "./workload-generator.js";

describe("simulator", () => {
  const nodes = generateCluster({ nodes: 2000, seed: 11 });
  const workloads = generateWorkloads({ count: 3000, seed: 11, zones: zoneNames(2000) });

  it("is reproducible from its seed and differs across seeds", () => {
    expect(generateCluster({ nodes: 2000, seed: 11 })).toEqual(nodes);
    expect(generateWorkloads({ count: 3000, seed: 11, zones: zoneNames(2000) })).toEqual(workloads);
    expect(generateCluster({ nodes: 2000, seed: 12 })).not.toEqual(nodes);
    expect(new SeededRandom(5).next()).toBe(new SeededRandom(5).next());
  });

  it("builds valid, plain-data nodes and requests", () => {
    for (const n of nodes) validateNode(n);
    for (const w of workloads) validatePlacementRequest(w);
    expect(JSON.parse(JSON.stringify(nodes.slice(0, 50)))).toEqual(nodes.slice(0, 50));
  });

  it("builds a heterogeneous cluster: zones, racks, sizes, kvm, arch, unhealthy nodes", () => {
    const share = (p: (n: (typeof nodes)[number]) => boolean) => nodes.filter(p).length / nodes.length;
    expect(new Set(nodes.map((n) => n.labels[simLabels.zone])).size).toBe(zoneNames(2000).length);
    expect(new Set(nodes.map((n) => n.labels[simLabels.rack])).size).toBe(50);
    expect(new Set(nodes.map((n) => n.labels[simLabels.size]))).toEqual(
      new Set(["small", "medium", "large", "highmem"]),
    );
    expect(share((n) => n.capabilities.includes("kvm"))).toBeGreaterThan(0.15);
    expect(share((n) => n.arch === "arm64")).toBeGreaterThan(0.03);
    expect(share((n) => n.cordoned)).toBeGreaterThan(0.005);
    expect(share((n) => !n.ready)).toBeGreaterThan(0.005);
    expect(share((n) => n.usage !== undefined)).toBeGreaterThan(0.8);
  });

  it("builds a workload mix of every kind and placement rule, with some impossible ones", () => {
    const share = (p: (w: (typeof workloads)[number]) => boolean) => workloads.filter(p).length / workloads.length;
    expect(new Set(workloads.map((w) => w.kind))).toEqual(new Set(["container", "compose", "vm"]));
    expect(share((w) => w.replicas > 1)).toBeGreaterThan(0.3);
    expect(share((w) => w.placement?.nodeSelector !== undefined)).toBeGreaterThan(0.1);
    expect(share((w) => (w.placement?.spread ?? []).length > 0)).toBeGreaterThan(0.03);
    expect(share((w) => w.placement?.antiAffinity?.replicas === "required")).toBeGreaterThan(0.03);
    expect(share((w) => (w.placement?.antiAffinity?.workloads ?? []).length > 0)).toBeGreaterThan(0.01);
    expect(share((w) => (w.hostPorts ?? []).length > 0)).toBeGreaterThan(0.02);
    expect(share((w) => w.placement?.requiredCapabilities?.includes("gpu-a100") ?? false)).toBeGreaterThan(0);
  });
});
