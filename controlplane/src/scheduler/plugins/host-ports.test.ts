import { describe, expect, it } from "vitest";
import type { HostPort } from "../model/scheduler-node.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import type { ReplicaPlacement } from "../snapshot/cluster-snapshot.js";
import { probeFilter, tally } from "../testing/probe-filter.js";

const tcp = (port: number): HostPort => ({ port, protocol: "tcp" });
const udp = (port: number): HostPort => ({ port, protocol: "udp" });
const nodes = [makeNode("a"), makeNode("b", { usedHostPorts: [tcp(9100)] }), makeNode("c")];
const holding = (nodeId: string, hostPorts: HostPort[]): ReplicaPlacement => ({
  workloadId: `other-${nodeId}`,
  replica: 0,
  nodeId,
  resources: resources(0, 0),
  hostPorts,
});

describe("host-ports filter", () => {
  it.each([
    { name: "no ports requested: nothing to check", ports: [], placed: [], want: {} },
    {
      name: "a port held by a placed replica",
      ports: [tcp(80)],
      placed: [holding("a", [tcp(80)])],
      want: { a: ["HOST_PORT_IN_USE"] },
    },
    { name: "a port the agent reported in use", ports: [tcp(9100)], placed: [], want: { b: ["HOST_PORT_IN_USE"] } },
    { name: "udp and tcp are different ports", ports: [udp(80)], placed: [holding("a", [tcp(80)])], want: {} },
    {
      name: "a node holding two of the ports counts once",
      ports: [tcp(80), tcp(443)],
      placed: [holding("a", [tcp(80), tcp(443)]), holding("c", [tcp(443)])],
      want: { a: ["HOST_PORT_IN_USE"], c: ["HOST_PORT_IN_USE"] },
    },
  ])("$name", ({ ports, placed, want }) => {
    const { perNode, counts } = probeFilter("host-ports", nodes, makeRequest("w", { hostPorts: ports }), placed);
    const expected = { a: [], b: [], c: [], ...want };
    expect(perNode).toEqual(expected);
    expect(counts).toEqual(tally(expected));
  });

  it("frees the port when the holder is released", () => {
    const { engine } = probeFilter("host-ports", nodes, makeRequest("w"), [holding("a", [tcp(80)])]);
    engine.snapshot.release("other-a", 0);
    expect(engine.explainNode(makeRequest("w", { hostPorts: [tcp(80)] }), "a").feasible).toBe(true);
  });

  it("keeps a second replica of the same workload off the node its first replica holds the port on", () => {
    const { engine } = probeFilter("host-ports", [makeNode("a"), makeNode("b")], makeRequest("w"));
    const result = engine.place(makeRequest("web", { replicas: 3, hostPorts: [tcp(8080)] }));
    expect(result.decisions.map((d) => d.nodeId ?? "pending").sort()).toEqual(["a", "b", "pending"]);
    expect(result.decisions[2]!.diagnosis.filterCounts).toEqual([
      { plugin: "host-ports", reason: "HOST_PORT_IN_USE", count: 2, subject: "tcp/8080" },
    ]);
  });
});
