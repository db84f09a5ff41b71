import type { CompiledSpread } from "../framework/compiled-request.js";
import type { Cycle } from "../framework/plugin.js";

/**
 * Where the workload's placed replicas sit over the domains of one spread label, and the least
 * and most loaded eligible domain. A domain is eligible when at least one node of it passes every
 * static filter (ready, schedulable, runtime, capabilities, selector, affinity).
 */
export interface SpreadCounts {
  readonly labelKey: string;
  readonly maxSkew: number;
  /** Domain id per class id; -1 when the class lacks the label. */
  readonly domainOf: Int32Array;
  /** Number of domain ids. */
  readonly domains: number;
  /** Replicas of the workload per domain id (valid below `domains`). */
  readonly counts: Int32Array;
  /** 1 for an eligible domain id (valid below `domains`). */
  readonly eligible: Uint8Array;
  /** Least replicas in an eligible domain (0 when there is none). */
  readonly min: number;
  /** Most replicas in an eligible domain (0 when there is none). */
  readonly max: number;
}

/** Reusable buffers for one spread constraint's counts; one per plugin and constraint position. */
class SpreadBuffers implements SpreadCounts {
  labelKey = "";
  maxSkew = 1;
  domainOf: Int32Array = new Int32Array(0);
  domains = 0;
  counts = new Int32Array(8);
  eligible: Uint8Array = new Uint8Array(0);
  min = 0;
  max = 0;
}

/** Eligible domains of one label for one request shape, valid while class sizes are unchanged. */
interface Eligibility {
  readonly sizeVersion: number;
  readonly classes: number;
  readonly eligible: Uint8Array;
}

/**
 * Counts the workload's replicas per spread domain for a cycle, in O(domains): replica counts per
 * label value are kept by the workload record, and the eligible domains are cached per request
 * shape (the static verdicts of the cycle) and label until a node joins, leaves or changes class.
 * Keeps buffers between cycles, so a result is valid until the next call for the same position.
 */
export class SpreadCounter {
  private readonly buffers: SpreadBuffers[] = [];
  private readonly eligibility = new WeakMap<Uint8Array, Map<string, Eligibility>>();

  /** Counts for constraint `i` of the request. */
  count(cycle: Cycle, spread: CompiledSpread, i: number): SpreadCounts {
    let b = this.buffers[i];
    if (b === undefined) {
      b = new SpreadBuffers();
      this.buffers[i] = b;
    }
    const registry = cycle.snapshot.classes;
    const topology = registry.topology(spread.labelKey);
    const domainOf = topology.domainOfClass(registry.all);
    const domains = topology.values.length;
    if (b.counts.length < domains) b.counts = new Int32Array(Math.max(domains, b.counts.length * 2));
    const counts = b.counts;
    counts.fill(0, 0, domains);
    if (cycle.workload) {
      for (const [value, n] of cycle.workload.countsByNodeLabel(spread.labelKey)) {
        const d = topology.idOf(value);
        if (d !== undefined) counts[d]! += n;
      }
    }
    const eligible = this.eligibleDomains(cycle, spread.labelKey, domainOf, domains);
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (let d = 0; d < domains; d++) {
      if (eligible[d] !== 1) continue;
      const c = counts[d]!;
      if (c < min) min = c;
      if (c > max) max = c;
    }
    b.labelKey = spread.labelKey;
    b.maxSkew = spread.maxSkew;
    b.domainOf = domainOf;
    b.domains = domains;
    b.eligible = eligible;
    b.min = min === Number.POSITIVE_INFINITY ? 0 : min;
    b.max = max;
    return b;
  }

  private eligibleDomains(cycle: Cycle, labelKey: string, domainOf: Int32Array, domains: number): Uint8Array {
    const registry = cycle.snapshot.classes;
    let byKey = this.eligibility.get(cycle.staticOk);
    if (byKey === undefined) {
      byKey = new Map();
      this.eligibility.set(cycle.staticOk, byKey);
    }
    const cached = byKey.get(labelKey);
    if (cached && cached.sizeVersion === registry.sizeVersion && cached.classes === registry.all.length) {
      return cached.eligible;
    }
    const eligible = new Uint8Array(Math.max(domains, 1));
    for (const cls of registry.all) {
      const d = domainOf[cls.id]!;
      if (d >= 0 && cls.size > 0 && cycle.staticOk[cls.id] === 1) eligible[d] = 1;
    }
    byKey.set(labelKey, { sizeVersion: registry.sizeVersion, classes: registry.all.length, eligible });
    return eligible;
  }
}
