import { clearBit, grown, setBit, wordsFor } from "./node-bitset.js";
import type { NodeEntry } from "./node-entry.js";

/** The nodes holding one host port: holders per node, and a bitset of their slots. */
export interface PortHolders {
  readonly nodes: ReadonlyMap<NodeEntry, number>;
  /** Bit per slot: the node holds the port. */
  readonly bits: Uint32Array;
}

interface MutableHolders {
  nodes: Map<NodeEntry, number>;
  bits: Uint32Array;
}

/**
 * Which nodes hold which host ports, by port key, counting holders (the node's own processes and
 * each reservation), so a port is free again only when its last holder lets go. Each port also
 * keeps a bitset of its holders' slots, so a filter can exclude them without a loop.
 */
export class HostPortIndex {
  private readonly holders = new Map<number, MutableHolders>();
  private words = 2;

  /** Makes room for `slots` slots in every bitset. */
  ensure(slots: number): void {
    this.words = Math.max(this.words, wordsFor(slots));
    for (const h of this.holders.values()) h.bits = grown(h.bits, this.words);
  }

  /** Adds one holder of each port on `entry`. */
  add(entry: NodeEntry, ports: readonly number[]): void {
    for (const port of ports) {
      let h = this.holders.get(port);
      if (h === undefined) {
        h = { nodes: new Map(), bits: new Uint32Array(this.words) };
        this.holders.set(port, h);
      }
      h.nodes.set(entry, (h.nodes.get(entry) ?? 0) + 1);
      setBit(h.bits, entry.slot);
    }
  }

  /** Removes one holder of each port on `entry`. */
  remove(entry: NodeEntry, ports: readonly number[]): void {
    for (const port of ports) {
      const h = this.holders.get(port);
      const count = h?.nodes.get(entry);
      if (h === undefined || count === undefined) continue;
      if (count > 1) h.nodes.set(entry, count - 1);
      else {
        h.nodes.delete(entry);
        clearBit(h.bits, entry.slot);
        if (h.nodes.size === 0) this.holders.delete(port);
      }
    }
  }

  /** A node moved from slot `from` to slot `to`: its bits follow. */
  move(entry: NodeEntry, from: number, to: number): void {
    for (const h of this.holders.values()) {
      if (!h.nodes.has(entry)) continue;
      clearBit(h.bits, from);
      setBit(h.bits, to);
    }
  }

  /** The holders of `port` (do not mutate), or undefined when nobody holds it. */
  holdersOf(port: number): PortHolders | undefined {
    return this.holders.get(port);
  }

  /** Whether `entry` holds `port`. */
  holds(entry: NodeEntry, port: number): boolean {
    return this.holders.get(port)?.nodes.has(entry) ?? false;
  }
}
