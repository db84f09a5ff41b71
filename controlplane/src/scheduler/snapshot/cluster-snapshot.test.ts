import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import type { SchedulerNode } from "../model/scheduler-node.js";
import { makeNode, resources } from "../simulation/node-builder.js";
import { ClusterSnapshot } from "./cluster-snapshot.js";

function snapshotOf(...nodes: SchedulerNode[]): ClusterSnapshot {
  const s = new ClusterSnapshot();
  for (const n of nodes) s.upsertNode(n);
  return s;
}

describe("ClusterSnapshot", () => {
  it("computes free capacity by reservation and gives it back exactly on release", () => {
    const s = snapshotOf(makeNode("n1", { usage: resources(3900, 8000) }));
    s.reserve({ workloadId: "web", replica: 0, nodeId: "n1", resources: resources(1500, 2048, 10) });
    expect(s.reservedOn("n1")).toEqual(resources(1500, 2048, 10));
    expect(s.columns.freeCpu[0]).toBe(2500);
    s.release("web", 0);
    expect(s.reservedOn("n1")).toEqual(resources(0, 0, 0));
  });

  it("bumps the generation on every mutation and never on a read or a dry run", () => {
    const s = snapshotOf(makeNode("n1"));
    const g0 = s.generation;
    s.reservedOn("n1");
    s.tentative(() => s.reserve({ workloadId: "w", replica: 0, nodeId: "n1", resources: resources(1, 1) }));
    expect(s.generation).toBe(g0);
    expect(s.placementOf("w", 0)).toBeUndefined();
    s.updateUsage("n1", resources(1, 1));
    expect(s.generation).toBe(g0 + 1);
  });

  it.each([
    { name: "became ready", patch: { ready: true }, from: { ready: false }, want: ["node-schedulable", "topology"] },
    {
      name: "uncordoned",
      patch: { cordoned: false },
      from: { cordoned: true },
      want: ["node-schedulable", "topology"],
    },
    { name: "cordoned", patch: { cordoned: true }, from: {}, want: ["topology"] },
    {
      name: "relabelled",
      patch: { labels: { zone: "b" } },
      from: { labels: { zone: "a" } },
      want: ["labels", "topology"],
    },
    { name: "gained kvm", patch: { capabilities: ["kvm"] }, from: {}, want: ["capabilities", "topology"] },
    {
      name: "more allocatable",
      patch: { allocatable: resources(8000, 8192, 100) },
      from: {},
      want: ["capacity"],
    },
    { name: "less allocatable", patch: { allocatable: resources(2000, 8192, 100) }, from: {}, want: [] },
    {
      name: "released a host port",
      patch: { usedHostPorts: [] },
      from: { usedHostPorts: [{ port: 22, protocol: "tcp" as const }] },
      want: ["host-ports"],
    },
    { name: "only usage", patch: { usage: resources(1, 1) }, from: {}, want: [] },
  ])("reports what may have improved when a node $name", ({ patch, from, want }) => {
    const s = snapshotOf(makeNode("n1", from));
    const change = s.updateNode("n1", patch);
    expect([...change.aspects].sort()).toEqual([...want].sort());
    expect(change.generation).toBe(s.generation);
  });

  it("reports a new node and a released replica", () => {
    const s = snapshotOf(makeNode("n1"));
    expect(s.upsertNode(makeNode("n2")).aspects).toEqual(["node-added"]);
    s.reserve({
      workloadId: "w",
      replica: 0,
      nodeId: "n1",
      resources: resources(100, 0),
      hostPorts: [{ port: 80, protocol: "tcp" }],
    });
    expect(s.release("w", 0)?.aspects).toEqual(["placements", "capacity", "host-ports"]);
    expect(s.release("w", 0)).toBeUndefined();
  });

  it("removes a node by moving the last one into its slot, releasing what ran there", () => {
    const s = snapshotOf(makeNode("a"), makeNode("b"), makeNode("c", { allocatable: resources(1000, 1000, 1) }));
    s.reserve({ workloadId: "w", replica: 0, nodeId: "a", resources: resources(100, 100) });
    s.reserve({ workloadId: "w", replica: 1, nodeId: "c", resources: resources(100, 100) });
    const change = s.removeNode("a");
    expect(change?.displaced).toEqual([{ workloadId: "w", replica: 0 }]);
    expect(s.nodeCount).toBe(2);
    expect(s.entryAt(0).id).toBe("c");
    expect(s.columns.freeCpu[0]).toBe(900);
    expect(s.placementOf("w", 1)).toBe("c");
    expect(s.free.cpu.countBelow(1000)).toBe(1);
  });

  it("groups nodes with identical static properties into one class", () => {
    const s = snapshotOf(
      makeNode("a", { labels: { zone: "x" }, allocatable: resources(1000, 1000) }),
      makeNode("b", { labels: { zone: "x" } }),
      makeNode("c", { labels: { zone: "y" } }),
    );
    expect(s.classes.all.map((c) => c.size)).toEqual([2, 1]);
    s.updateNode("a", { cordoned: true });
    expect(s.classes.all.map((c) => c.size)).toEqual([1, 1, 1]);
  });

  it.each([
    {
      name: "reserving on an unknown node",
      act: (s: ClusterSnapshot) =>
        s.reserve({ workloadId: "w", replica: 0, nodeId: "nope", resources: resources(1, 1) }),
      code: "NOT_FOUND",
    },
    {
      name: "reserving a replica twice",
      act: (s: ClusterSnapshot) => {
        s.reserve({ workloadId: "w", replica: 0, nodeId: "n1", resources: resources(1, 1) });
        s.reserve({ workloadId: "w", replica: 0, nodeId: "n1", resources: resources(1, 1) });
      },
      code: "CONFLICT",
    },
    {
      name: "a node with a negative allocatable",
      act: (s: ClusterSnapshot) => s.upsertNode(makeNode("bad", { allocatable: resources(-1, 1) })),
      code: "INVALID_ARGUMENT",
    },
    {
      name: "mutating inside a dry run",
      act: (s: ClusterSnapshot) => s.tentative(() => s.removeNode("n1")),
      code: "INTERNAL",
    },
  ])("rejects $name", ({ act, code }) => {
    const s = snapshotOf(makeNode("n1"));
    try {
      act(s);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(PersysError);
      expect((e as PersysError).code).toBe(code);
    }
  });
});
