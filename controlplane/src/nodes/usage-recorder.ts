import type { api } from "@persys/schema";
import type { EventStore } from "../events/event-store.js";
import { budgetedResolutionMs } from "../intelligence/sample-budget.js";

export interface UsageSample {
  readonly at: number;
  readonly cpuMillicores: number;
  readonly memoryMib: number;
  readonly diskGib: number;
}

/** Series names of the usage data the intelligence layer reads. */
export const usageSeries = {
  nodeCpu: (nodeId: string) => `usage:node:${nodeId}:cpu`,
  nodeMemory: (nodeId: string) => `usage:node:${nodeId}:memory`,
  /** GiB used on the node's data filesystem (what the agent measures with statfs). */
  nodeDisk: (nodeId: string) => `usage:node:${nodeId}:disk`,
  replicaCpu: (workloadId: string, index: number) => `usage:replica:${workloadId}:${index}:cpu`,
  replicaMemory: (workloadId: string, index: number) => `usage:replica:${workloadId}:${index}:memory`,
};

/**
 * Keeps the latest measured usage per node in memory (for node views and scoring) and writes usage
 * series to the event store at a bounded resolution (one point per series per `resolutionMs`), so
 * heartbeat rate does not become write rate; with `maxPointsPerSecond`, the resolution coarsens in
 * whole multiples of `resolutionMs` when the series written lately would exceed it (sample-budget.ts).
 */
export class UsageRecorder {
  private readonly latest = new Map<string, UsageSample>();
  private readonly lastWritten = new Map<string, number>();
  private resolution: number;
  private budgetedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly events: EventStore,
    private readonly resolutionMs = 10_000,
    private readonly maxPointsPerSecond = Number.POSITIVE_INFINITY,
  ) {
    this.resolution = resolutionMs;
  }

  /** The resolution in force now (ms between points of one series). */
  get currentResolutionMs(): number {
    return this.resolution;
  }

  latestOf(nodeId: string): UsageSample | undefined {
    return this.latest.get(nodeId);
  }

  latestResources(nodeId: string): api.Resources | undefined {
    const u = this.latest.get(nodeId);
    return u ? { cpuMillicores: u.cpuMillicores, memoryMib: u.memoryMib, diskGib: u.diskGib } : undefined;
  }

  forget(nodeId: string): void {
    this.latest.delete(nodeId);
  }

  /** Records a node's usage; returns whether the scheduler's copy should be refreshed (changed ≥ 5 %). */
  recordNode(nodeId: string, sample: UsageSample): boolean {
    const previous = this.latest.get(nodeId);
    this.latest.set(nodeId, sample);
    this.write(usageSeries.nodeCpu(nodeId), sample.at, sample.cpuMillicores);
    this.write(usageSeries.nodeMemory(nodeId), sample.at, sample.memoryMib);
    this.write(usageSeries.nodeDisk(nodeId), sample.at, sample.diskGib);
    if (!previous) return true;
    const moved = (a: number, b: number) => Math.abs(a - b) > Math.max(1, 0.05 * Math.max(a, b));
    return moved(previous.cpuMillicores, sample.cpuMillicores) || moved(previous.memoryMib, sample.memoryMib);
  }

  recordReplica(workloadId: string, index: number, at: number, cpuMillicores: number, memoryBytes: number): void {
    this.write(usageSeries.replicaCpu(workloadId, index), at, cpuMillicores);
    this.write(usageSeries.replicaMemory(workloadId, index), at, memoryBytes / (1024 * 1024));
  }

  private write(series: string, at: number, value: number): void {
    if (at - this.budgetedAt >= this.resolutionMs) this.rebudget(at);
    const last = this.lastWritten.get(series) ?? 0;
    if (at - last < this.resolution || !Number.isFinite(value)) return;
    this.lastWritten.set(series, at);
    // Usage is best effort: a degraded event store must not slow heartbeats down.
    this.events.addSample(series, at, value, { resolutionMs: this.resolution }).catch(() => {});
  }

  /** Forgets series not written for three periods (gone replicas) and sizes the resolution to the rest. */
  private rebudget(at: number): void {
    this.budgetedAt = at;
    for (const [series, last] of this.lastWritten) {
      if (at - last > 3 * this.resolution) this.lastWritten.delete(series);
    }
    this.resolution = budgetedResolutionMs(this.resolutionMs, this.lastWritten.size, this.maxPointsPerSecond);
  }
}
