import type { CompiledRequest } from "../framework/compiled-request.js";
import type { Cycle, NodeFilter, RejectSink } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { popcount, wordsFor } from "../snapshot/node-bitset.js";
import type { DomainSlots } from "../snapshot/node-classes.js";
import { SpreadCounter, type SpreadCounts } from "./spread-counts.js";

/**
 * Filter for `do-not-schedule` spread constraints: a node must carry the spread label
 * (SPREAD_LABEL_MISSING), and placing the replica in its domain must keep (domain count + 1) −
 * (least eligible domain count) within maxSkew (SPREAD_MAX_SKEW). The verdict is per domain, so
 * `run` rejects whole domains through their node bitsets.
 */
export class TopologySpreadFilter implements NodeFilter {
  readonly scope = "node";
  readonly name = "topology-spread";
  readonly reasons = [Reason.SPREAD_LABEL_MISSING, Reason.SPREAD_MAX_SKEW] as const;
  private readonly counter = new SpreadCounter();
  private readonly state: SpreadCounts[] = [];
  private readonly slots: DomainSlots[] = [];
  private missing = new Uint32Array(2);
  private blocked = new Uint32Array(2);

  prepare(cycle: Cycle): boolean {
    const { request, snapshot } = cycle;
    this.state.length = 0;
    this.slots.length = 0;
    const spread = request.spread;
    for (let i = 0; i < spread.length; i++) {
      const s = spread[i]!;
      if (!s.hard) continue;
      this.state.push(this.counter.count(cycle, s, i));
      const topology = snapshot.classes.topology(s.labelKey);
      const classes = snapshot.classes.all;
      this.slots.push(
        topology.domainSlots(classes, snapshot.columns.classOf, snapshot.nodeCount, snapshot.slotVersion),
      );
    }
    return this.state.length > 0;
  }

  run(cycle: Cycle, sink: RejectSink): void {
    const words = wordsFor(cycle.snapshot.nodeCount);
    if (this.missing.length < words) {
      this.missing = new Uint32Array(words);
      this.blocked = new Uint32Array(words);
    }
    const missing = this.missing;
    const blocked = this.blocked;
    missing.fill(0, 0, words);
    blocked.fill(0, 0, words);
    this.state.forEach((s, i) => {
      const slots = this.slots[i]!;
      if (slots.missingSize > 0) for (let w = 0; w < words; w++) missing[w]! |= slots.missingBits[w]!;
      slots.domainBits.forEach((bits, d) => {
        if (slots.domainSize[d] === 0 || s.counts[d]! + 1 - s.min <= s.maxSkew) return;
        for (let w = 0; w < words; w++) blocked[w]! |= bits[w]!;
      });
    });
    const missingCount = popcount(missing, words);
    if (missingCount > 0) sink.rejectAll(missing, 0, missingCount);
    const blockedCount = popcount(blocked, words);
    if (blockedCount > 0) sink.rejectAll(blocked, 1, blockedCount);
  }

  check(cycle: Cycle, slot: number): number {
    const cls = cycle.snapshot.entryAt(slot).cls.id;
    let mask = 0;
    for (const s of this.state) {
      const d = s.domainOf[cls]!;
      if (d < 0) mask |= 1;
      else if (s.counts[d]! + 1 - s.min > s.maxSkew) mask |= 2;
    }
    return mask;
  }

  subject(request: CompiledRequest, reason: number): string {
    const hard = request.spread.filter((s) => s.hard);
    if (reason === 0) return hard.map((s) => s.labelKey).join(", ");
    return hard.map((s) => `${s.labelKey} maxSkew ${s.maxSkew}`).join(", ");
  }
}

/** The topology spread filter. */
export function topologySpreadFilter(): TopologySpreadFilter {
  return new TopologySpreadFilter();
}
