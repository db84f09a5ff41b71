import type { Cycle, FilterDetail, NodeFilter, RejectSink } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { hostPortText } from "../model/scheduler-node.js";
import { hasBit, popcount, wordsFor } from "../snapshot/node-bitset.js";

/**
 * Filter: none of the request's host ports is held on the node, by a placed replica or by a
 * process the agent reported. Uses the snapshot's per-port holder bitsets (one port: as is;
 * several: their union), so it never visits nodes one by one.
 */
export class HostPortsFree implements NodeFilter {
  readonly scope = "node";
  readonly name = "host-ports";
  readonly reasons = [Reason.HOST_PORT_IN_USE] as const;
  private held = new Uint32Array(2);
  private heldCount = 0;

  prepare(cycle: Cycle): boolean {
    const ports = cycle.request.portKeys;
    if (ports.length === 0) return false;
    const words = wordsFor(cycle.snapshot.nodeCount);
    if (this.held.length < words) this.held = new Uint32Array(Math.max(words, this.held.length * 2));
    const held = this.held;
    held.fill(0, 0, words);
    for (const port of ports) {
      const holders = cycle.snapshot.ports.holdersOf(port);
      if (holders) for (let w = 0; w < words; w++) held[w]! |= holders.bits[w]!;
    }
    this.heldCount = popcount(held, words);
    return true;
  }

  run(_cycle: Cycle, sink: RejectSink): void {
    if (this.heldCount > 0) sink.rejectAll(this.held, 0, this.heldCount);
  }

  check(_cycle: Cycle, slot: number): number {
    return hasBit(this.held, slot) ? 1 : 0;
  }

  detail(cycle: Cycle, slot: number): FilterDetail {
    const entry = cycle.snapshot.entryAt(slot);
    const inUse = cycle.request.portKeys.filter((p) => cycle.snapshot.ports.holds(entry, p));
    return { subject: inUse.map(hostPortText).join(", ") };
  }

  subject(request: Cycle["request"]): string {
    return request.portKeys.map(hostPortText).join(", ");
  }
}

/** The host-ports filter. */
export function hostPortsFree(): HostPortsFree {
  return new HostPortsFree();
}
