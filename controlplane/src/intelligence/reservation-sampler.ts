import type { ClusterState } from "../cluster/cluster-state.js";
import { workloadOf } from "../cluster/records.js";
import type { EventStore } from "../events/event-store.js";
import { budgetedResolutionMs } from "./sample-budget.js";

export type Dimension = "cpu" | "memory" | "disk";

/** Series names of what placed replicas reserve on each node (written by {@link ReservationSampler}). */
export const reservationSeries = (nodeId: string, dimension: Dimension) => `reserved:node:${nodeId}:${dimension}`;

/** Reservations per node now: the summed requests of the replicas assigned to it. */
export function reservationsByNode(state: ClusterState): Map<string, Record<Dimension, number>> {
  const out = new Map<string, Record<Dimension, number>>();
  for (const nodeId of state.nodes.keys()) {
    const sum = { cpu: 0, memory: 0, disk: 0 };
    for (const a of state.assignmentsOn(nodeId)) {
      const record = state.workloads.get(a.value.workloadId)?.value;
      const resources = record ? workloadOf(record).resources : undefined;
      sum.cpu += resources?.cpuMillicores ?? 0;
      sum.memory += resources?.memoryMib ?? 0;
      sum.disk += resources?.diskGib ?? 0;
    }
    out.set(nodeId, sum);
  }
  return out;
}

/**
 * Samples every node's reservations into the event store once per `intervalMs` (series bounded by
 * the store's defaults: 10,000 points, 7 days), so forecasts can fit a trend to them. Samples are
 * bucketed by the interval, so two servers sampling at once write the same points. Best effort: a
 * degraded event store loses samples, nothing else. With `maxPointsPerSecond`, a cluster with more
 * series than that allows at `intervalMs` is sampled every few ticks instead (sample-budget.ts).
 */
export class ReservationSampler {
  private timer: NodeJS.Timeout | undefined;
  private lastSampledAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly state: ClusterState,
    private readonly events: Pick<EventStore, "addSample">,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxPointsPerSecond = Number.POSITIVE_INFINITY,
  ) {}

  start(): void {
    if (this.timer) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Writes one point per node and dimension now (unless the budget says this tick is skipped). */
  sample(): void {
    const at = this.now();
    const resolution = budgetedResolutionMs(this.intervalMs, this.state.nodes.size * 3, this.maxPointsPerSecond);
    // Ticks come about one interval apart: half an interval of slack keeps timer jitter from skipping one.
    if (resolution > this.intervalMs && at - this.lastSampledAt < resolution - this.intervalMs / 2) return;
    this.lastSampledAt = at;
    for (const [nodeId, sums] of reservationsByNode(this.state)) {
      for (const dimension of ["cpu", "memory", "disk"] as const) {
        this.events
          .addSample(reservationSeries(nodeId, dimension), at, sums[dimension], { resolutionMs: resolution })
          .catch(() => {});
      }
    }
  }
}
