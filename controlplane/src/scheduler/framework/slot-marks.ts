/**
 * A set of node slots for one cycle without clearing between cycles: a slot is in the set when
 * its stamp equals the current cycle id. Sparse filters mark the few nodes they reject and then
 * answer per node in O(1). Nothing is allocated per cycle once the arrays have grown.
 */
export class SlotMarks {
  private stamp = new Int32Array(64);
  private counts = new Int32Array(64);
  private list = new Int32Array(64);
  private cycle = -1;
  /** Number of slots marked this cycle. */
  size = 0;

  /** Empties the set for cycle `id` (ids must differ between cycles) over `capacity` slots. */
  reset(id: number, capacity: number): void {
    if (this.stamp.length < capacity) {
      const size = Math.max(capacity, this.stamp.length * 2);
      this.stamp = new Int32Array(size);
      this.counts = new Int32Array(size);
      this.list = new Int32Array(size);
    }
    this.cycle = id;
    this.size = 0;
  }

  /** Adds `slot`, counting `n` against it. */
  mark(slot: number, n = 1): void {
    if (this.stamp[slot] !== this.cycle) {
      this.stamp[slot] = this.cycle;
      this.counts[slot] = n;
      this.list[this.size++] = slot;
    } else this.counts[slot]! += n;
  }

  /** The i-th slot marked this cycle (i < size), in marking order. */
  at(i: number): number {
    return this.list[i]!;
  }

  /** Whether `slot` is in the set. */
  has(slot: number): boolean {
    return this.stamp[slot] === this.cycle;
  }

  /** The count marked against `slot` (0 when unmarked). */
  count(slot: number): number {
    return this.stamp[slot] === this.cycle ? this.counts[slot]! : 0;
  }
}
