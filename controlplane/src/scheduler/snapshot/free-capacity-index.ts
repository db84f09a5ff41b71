import { clearBit, grown, hasBit, setBit, wordsFor } from "./node-bitset.js";

/** The nodes with at least `value` free, kept current as reservations come and go. */
export interface Threshold {
  readonly value: number;
  /** Bit per slot: free ≥ value. */
  readonly bits: Uint32Array;
  /** Number of set bits. */
  readonly count: number;
}

class MutableThreshold implements Threshold {
  count = 0;
  used = 0;
  constructor(
    readonly value: number,
    public bits: Uint32Array,
  ) {}
}

/** How many thresholds one dimension keeps before evicting the least recently used. */
export const maxThresholds = 64;

/**
 * One resource dimension's free amounts, indexed two ways: sorted (how many nodes have less than
 * x free, and the most free among them, in O(log n)), and as bitsets of the nodes with at least x
 * free for the amounts requests actually ask for (cached per amount, updated on every change in
 * O(cached amounts)). Together they let a decision count and intersect resource fits without
 * visiting every node.
 */
export class DimensionIndex {
  private sorted = new Float64Array(64);
  private size = 0;
  private readonly thresholds = new Map<number, MutableThreshold>();
  /** The same thresholds as a list: iterated on every change, faster than the map. */
  private list: MutableThreshold[] = [];
  private words = 2;
  private clock = 0;

  constructor(private readonly read: (slot: number) => number) {}

  /** Makes room for `slots` slots in every bitset. */
  ensure(slots: number): void {
    this.words = Math.max(this.words, wordsFor(slots));
    for (const t of this.list) t.bits = grown(t.bits, this.words);
  }

  /** A node entered `slot` with `free`. */
  add(slot: number, free: number): void {
    if (this.size === this.sorted.length) {
      const bigger = new Float64Array(this.sorted.length * 2);
      bigger.set(this.sorted);
      this.sorted = bigger;
    }
    const pos = this.lowerBound(free);
    this.sorted.copyWithin(pos + 1, pos, this.size);
    this.sorted[pos] = free;
    this.size++;
    for (const t of this.list) {
      if (free >= t.value) {
        setBit(t.bits, slot);
        t.count++;
      }
    }
  }

  /** The node in `slot` (with `free`) left. */
  remove(slot: number, free: number): void {
    const pos = this.lowerBound(free);
    this.sorted.copyWithin(pos, pos + 1, this.size);
    this.size--;
    for (const t of this.list) {
      if (hasBit(t.bits, slot)) {
        clearBit(t.bits, slot);
        t.count--;
      }
    }
  }

  /** The node in `slot` went from `before` to `after` free. */
  change(slot: number, before: number, after: number): void {
    if (before === after) return;
    const idx = this.lowerBound(before);
    const s = this.sorted;
    if (after < before) {
      const pos = this.lowerBound(after);
      s.copyWithin(pos + 1, pos, idx);
      s[pos] = after;
    } else {
      const pos = this.lowerBound(after);
      s.copyWithin(idx, idx + 1, pos);
      s[pos - 1] = after;
    }
    const list = this.list;
    for (let i = 0; i < list.length; i++) {
      const t = list[i]!;
      const was = before >= t.value;
      if (was === after >= t.value) continue;
      if (was) {
        clearBit(t.bits, slot);
        t.count--;
      } else {
        setBit(t.bits, slot);
        t.count++;
      }
    }
  }

  /** The node in `from` moved to `to` (which was free); bits follow it. */
  move(from: number, to: number): void {
    for (const t of this.list) {
      if (hasBit(t.bits, from)) {
        clearBit(t.bits, from);
        setBit(t.bits, to);
      }
    }
  }

  /** Number of nodes with less than `value` free. */
  countBelow(value: number): number {
    return this.lowerBound(value);
  }

  /** The most free among nodes with less than `value` free, or undefined when there is none. */
  bestBelow(value: number): number | undefined {
    const pos = this.lowerBound(value);
    return pos === 0 ? undefined : this.sorted[pos - 1];
  }

  /** The nodes among the first `slots` with at least `value` free (cached; built in O(n) on first use). */
  atLeast(value: number, slots: number): Threshold {
    let t = this.thresholds.get(value);
    if (t === undefined) {
      if (this.thresholds.size >= maxThresholds) this.evict();
      t = new MutableThreshold(value, new Uint32Array(this.words));
      for (let s = 0; s < slots; s++) {
        if (this.read(s) >= value) {
          setBit(t.bits, s);
          t.count++;
        }
      }
      this.thresholds.set(value, t);
      this.list.push(t);
    }
    t.used = ++this.clock;
    return t;
  }

  private evict(): void {
    let oldest: MutableThreshold | undefined;
    for (const t of this.thresholds.values()) if (oldest === undefined || t.used < oldest.used) oldest = t;
    if (oldest === undefined) return;
    this.thresholds.delete(oldest.value);
    this.list = this.list.filter((t) => t !== oldest);
  }

  private lowerBound(value: number): number {
    let lo = 0;
    let hi = this.size;
    const s = this.sorted;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (s[mid]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
