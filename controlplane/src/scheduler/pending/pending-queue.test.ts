import { describe, expect, it } from "vitest";
import type { PlacementRequest } from "../model/placement-request.js";
import { SchedulerEngine } from "../scheduler-engine.js";
import { makeNode, makeRequest, resources } from "../simulation/node-builder.js";
import type { ClusterChange } from "../snapshot/cluster-change.js";
import { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";
import { PendingQueue } from "./pending-queue.js";

/** A cluster with one small zone-a node, and three replicas pending for different reasons. */
function setup() {
  const snapshot = new ClusterSnapshot();
  snapshot.upsertNode(makeNode("n1", { labels: { zone: "a" }, allocatable: resources(1000, 1024, 10) }));
  snapshot.reserve({ workloadId: "filler", replica: 0, nodeId: "n1", resources: resources(900, 0) });
  const engine = new SchedulerEngine(snapshot, { clock: () => 0 });
  const queue = new PendingQueue();
  const requests: Record<string, PlacementRequest> = {
    "needs-cpu": makeRequest("needs-cpu", { resources: resources(500, 128) }),
    "needs-zone-b": makeRequest("needs-zone-b", { placement: { nodeSelector: { zone: "b" } } }),
    "needs-kvm": makeRequest("needs-kvm", { kind: "vm", placement: { requiredCapabilities: ["kvm"] } }),
  };
  for (const r of Object.values(requests)) {
    for (const d of engine.place(r).decisions) if (d.nodeId === null) queue.record(d.diagnosis);
  }
  return { snapshot, engine, queue, requests };
}

const ids = (q: { workloadId: string }[]) => q.map((p) => p.workloadId).sort();

describe("PendingQueue", () => {
  it("records unschedulable replicas with their reasons and diagnosis generation", () => {
    const { queue, snapshot } = setup();
    expect(queue.size).toBe(3);
    const p = queue.get("needs-zone-b", 0)!;
    expect([...p.reasons]).toEqual(["NODE_SELECTOR_MISMATCH"]);
    expect(p.generation).toBe(snapshot.generation);
    expect(p.diagnosis.message).toMatch(/^0\/1 nodes are available/);
  });

  it.each([
    {
      name: "freed capacity retries only resource shortages",
      change: (s: ClusterSnapshot) => s.release("filler", 0)!,
      want: ["needs-cpu"],
    },
    {
      name: "a relabelled node retries only selector mismatches",
      change: (s: ClusterSnapshot) => s.updateNode("n1", { labels: { zone: "b" } }),
      want: ["needs-zone-b"],
    },
    {
      name: "a node gaining kvm and the vm runtime retries the VM",
      change: (s: ClusterSnapshot) => s.updateNode("n1", { capabilities: ["kvm"], runtimes: ["container", "vm"] }),
      want: ["needs-kvm"],
    },
    {
      name: "a new node retries everything",
      change: (s: ClusterSnapshot) => s.upsertNode(makeNode("n2")),
      want: ["needs-cpu", "needs-kvm", "needs-zone-b"],
    },
    {
      name: "a usage report retries nothing",
      change: (s: ClusterSnapshot) => s.updateUsage("n1", resources(1, 1)),
      want: [],
    },
    {
      name: "cordoning a node retries nothing",
      change: (s: ClusterSnapshot) => s.updateNode("n1", { cordoned: true }),
      want: [],
    },
  ])("$name", ({ change, want }) => {
    const { snapshot, queue } = setup();
    expect(ids(queue.retryCandidates(change(snapshot)))).toEqual(want);
  });

  it("ignores changes the diagnosis already saw", () => {
    const { snapshot, queue } = setup();
    const old: ClusterChange = {
      generation: snapshot.generation,
      kind: "node-added",
      nodeId: "n0",
      aspects: ["node-added"],
    };
    expect(queue.retryCandidates(old)).toEqual([]);
  });

  it("retried replicas get placed once the change fixes them, and leave the queue", () => {
    const { snapshot, engine, queue, requests } = setup();
    const change = snapshot.upsertNode(makeNode("n2", { labels: { zone: "b" } }));
    for (const p of queue.retryCandidates(change)) {
      for (const d of engine.place(requests[p.workloadId]!).decisions) {
        if (d.nodeId === null) queue.record(d.diagnosis);
        else queue.resolve(d.workloadId, d.replica);
      }
    }
    expect(ids(queue.list())).toEqual(["needs-kvm"]);
    expect(queue.get("needs-kvm", 0)!.generation).toBe(snapshot.generation);
  });

  it("forgets a deleted workload", () => {
    const { queue } = setup();
    expect(queue.removeWorkload("needs-cpu")).toBe(1);
    expect(queue.resolve("needs-cpu", 0)).toBe(false);
    expect(queue.size).toBe(2);
  });
});
