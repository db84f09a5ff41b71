import { describe, expect, it } from "vitest";
import { ClusterStore, EVENT_BUFFER } from "./cluster-store.js";

const now = (fn: () => void) => fn();

describe("ClusterStore", () => {
  it("keeps the object of an unchanged node and reports whether anything changed", () => {
    const store = new ClusterStore(now);
    expect(store.replaceNodes([{ id: "a", state: "NODE_STATE_READY" }, { id: "b" }])).toBe(true);
    const a = store.nodes.get("a");
    expect(store.replaceNodes([{ id: "a", state: "NODE_STATE_READY" }, { id: "b" }])).toBe(false);
    expect(store.nodes.get("a")).toBe(a);
    expect(store.replaceNodes([{ id: "a", cordoned: true }])).toBe(true);
    expect([...store.nodes.keys()]).toEqual(["a"]);
    expect(store.nodes.get("a")?.cordoned).toBe(true);
  });

  it("applies workload watch events", () => {
    const store = new ClusterStore(now);
    store.applyWorkloadEvent({ type: "WATCH_EVENT_TYPE_ADDED", workload: { id: "w" }, storeRevision: 1 });
    store.applyWorkloadEvent({
      type: "WATCH_EVENT_TYPE_MODIFIED",
      workload: { id: "w", status: { state: "WORKLOAD_STATE_RUNNING" } },
    });
    expect(store.workloads.get("w")?.status?.state).toBe("WORKLOAD_STATE_RUNNING");
    store.applyWorkloadEvent({ type: "WATCH_EVENT_TYPE_BOOKMARK", storeRevision: 5 });
    store.applyWorkloadEvent({ type: "WATCH_EVENT_TYPE_DELETED", workload: { id: "w" } });
    expect(store.workloads.size).toBe(0);
  });

  it("tells listeners once per scheduled frame however many changes came", () => {
    const frames: (() => void)[] = [];
    const store = new ClusterStore((fn) => frames.push(fn));
    let calls = 0;
    store.subscribe(() => calls++);
    for (let i = 0; i < 1000; i++)
      store.applyWorkloadEvent({ type: "WATCH_EVENT_TYPE_ADDED", workload: { id: `w${i}` } });
    expect(frames).toHaveLength(1);
    frames[0]!();
    expect(calls).toBe(1);
    expect(store.version).toBe(1000);
  });

  it("keeps the last events, each once", () => {
    const store = new ClusterStore(now);
    store.addEvents([{ id: "1" }, { id: "2" }]);
    store.addEvents([{ id: "2" }, { id: "3" }]);
    expect(store.events.map((e) => e.id)).toEqual(["1", "2", "3"]);
    store.addEvents(Array.from({ length: EVENT_BUFFER }, (_, i) => ({ id: `x${i}` })));
    expect(store.events).toHaveLength(EVENT_BUFFER);
    expect(store.events[0]!.id).toBe("x0");
  });
});

describe("ClusterStore partial node pages", () => {
  it("draws a first page at once and removes nothing until the full list", () => {
    const store = new ClusterStore(now);
    store.replaceNodes([{ id: "a" }], true);
    expect(store.nodesLoaded).toBe(false);
    expect(store.nodes.size).toBe(1);
    store.replaceNodes([{ id: "b" }]);
    expect(store.nodesLoaded).toBe(true);
    expect([...store.nodes.keys()]).toEqual(["b"]);
  });
});
