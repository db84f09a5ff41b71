/**
 * Shared set-up of the single-node suites: a fake AgentControl (a real gRPC server), one simulated
 * node registered with it, and a real AgentService client to the node's own endpoint. Not a suite.
 */
import type { api } from "@persys/schema";
import { afterEach } from "vitest";
import { type AgentCaller, connectAgent } from "./agent-caller.js";
import { FakeAgentControl, type FakeAgentControlOptions } from "./fake-agent-control.js";
import type { SimNodeDescription } from "./node-description.js";
import { SimulatedNode, type SimulatedNodeOptions } from "./simulated-node.js";

/** The node the suites simulate: kvm-capable arm64 with all three runtimes. */
export const description: SimNodeDescription = {
  id: "node-a",
  labels: { "topology.persys.io/zone": "zone-a" },
  capabilities: ["kvm"],
  runtimes: ["container", "compose", "vm"],
  arch: "arm64",
  capacity: { cpuMillicores: 8000, memoryMiB: 16384, diskGiB: 200 },
  allocatable: { cpuMillicores: 7750, memoryMiB: 15360, diskGiB: 190 },
};

/** What a suite works with. */
export interface Harness {
  fake: FakeAgentControl;
  node: SimulatedNode;
  caller: AgentCaller;
}

/**
 * Registers cleanup after each test of the calling suite and returns the factory: each call starts
 * a fake control plane and a registered node (start delay 30 ms unless overridden).
 */
export function useHarness(): {
  harness: (nodeOptions?: Partial<SimulatedNodeOptions>, fakeOptions?: FakeAgentControlOptions) => Promise<Harness>;
  cleanups: (() => unknown)[];
} {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const harness = async (
    nodeOptions: Partial<SimulatedNodeOptions> = {},
    fakeOptions: FakeAgentControlOptions = {},
  ) => {
    const fake = await FakeAgentControl.start(fakeOptions);
    cleanups.push(() => fake.close());
    const node = await SimulatedNode.start({
      node: description,
      controlPlane: fake.address,
      startDelayMs: 30,
      registerBackoff: { initialMs: 50, maxMs: 200 },
      ...nodeOptions,
    });
    cleanups.push(() => node.close());
    await node.registered();
    const caller = connectAgent(node.endpoint);
    cleanups.push(() => caller.close());
    return { fake, node, caller };
  };
  return { harness, cleanups };
}

/** A check for `waitUntil`: the latest heartbeat report of a replica matching `match`, with its Go status. */
export function reported(fake: FakeAgentControl, nodeId: string, match: (r: api.ReplicaReport) => boolean) {
  return () => {
    const hb = fake.heartbeatsOf(nodeId).findLast((h) => h.persysReplicas.some(match));
    if (!hb) return undefined;
    const report = hb.persysReplicas.find(match)!;
    const goStatus = hb.workloadStatuses.find((s) => s.workloadId === `${report.workloadId}-${report.replicaIndex}`);
    return { hb, report, goStatus };
  };
}
