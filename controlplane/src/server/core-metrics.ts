import { api } from "@persys/schema";
import { Gauge, type Registry } from "prom-client";
import type { ClusterState } from "../cluster/cluster-state.js";
import type { EventStore } from "../events/event-store.js";
import { workloadView } from "../workloads/workload-view.js";

/**
 * The control plane's own gauges, computed from the cluster state cache when Prometheus scrapes:
 * nodes by state, workloads and replicas by state, leadership, reconcile queue depth and the event
 * store's health. Cheap enough for tens of thousands of workloads (one pass per scrape).
 */
export function registerCoreMetrics(
  registry: Registry,
  source: { state: ClusterState; events: EventStore; isLeader: () => boolean; queueDepth: () => number },
): void {
  const { state } = source;
  new Gauge({
    name: "persys_nodes",
    help: "Registered nodes by state.",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const held of state.nodes.values()) {
        const node = held.value;
        const s = node.lostAt ? "lost" : state.isLive(node.id) ? (node.cordoned ? "cordoned" : "ready") : "not_ready";
        this.inc({ state: s });
      }
    },
  });
  new Gauge({
    name: "persys_workloads",
    help: "Workloads by rolled-up state.",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const held of state.workloads.values()) {
        const s = api
          .workloadStateToJSON(workloadView(state, held, false).status!.state)
          .replace("WORKLOAD_STATE_", "")
          .toLowerCase();
        this.inc({ state: s });
      }
    },
  });
  new Gauge({
    name: "persys_replicas_pending",
    help: "Replicas no node can take now (each with a placement diagnosis).",
    registers: [registry],
    collect() {
      this.set(state.pending.size);
    },
  });
  new Gauge({
    name: "persys_leader",
    help: "1 when this server is the leader (schedules and reconciles).",
    registers: [registry],
    collect() {
      this.set(source.isLeader() ? 1 : 0);
    },
  });
  new Gauge({
    name: "persys_reconcile_queue_depth",
    help: "Keys queued or being reconciled on the leader.",
    registers: [registry],
    collect() {
      this.set(source.queueDepth());
    },
  });
  new Gauge({
    name: "persys_event_store_degraded",
    help: "1 while the event store is degraded (events are buffered or dropped; scheduling goes on).",
    registers: [registry],
    collect() {
      this.set(source.events.health().state === "ok" ? 0 : 1);
    },
  });
  new Gauge({
    name: "persys_state_revision",
    help: "State store revision the cluster state cache reflects.",
    registers: [registry],
    collect() {
      this.set(state.revision);
    },
  });
}
