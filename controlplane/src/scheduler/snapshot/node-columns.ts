/**
 * Per-node numbers in dense typed arrays indexed by slot (struct of arrays), so the filters that
 * must look at every node run as tight loops without touching objects. Owned by the snapshot;
 * plugins read them and must re-read the fields each cycle (growing replaces the arrays).
 */
export class NodeColumns {
  /** Class id per slot. */
  classOf = new Int32Array(0);
  allocCpu = new Float64Array(0);
  allocMemory = new Float64Array(0);
  allocDisk = new Float64Array(0);
  /** 1 / allocatable (0 where allocatable is 0), so scorers multiply instead of divide. */
  invAllocCpu = new Float64Array(0);
  invAllocMemory = new Float64Array(0);
  invAllocDisk = new Float64Array(0);
  /** Allocatable minus reservations; negative only if reservations were loaded beyond allocatable. */
  freeCpu = new Float64Array(0);
  freeMemory = new Float64Array(0);
  freeDisk = new Float64Array(0);
  capacityCpu = new Float64Array(0);
  capacityMemory = new Float64Array(0);
  /** Measured usage; meaningful only where `hasUsage` is 1. */
  usageCpu = new Float64Array(0);
  usageMemory = new Float64Array(0);
  hasUsage = new Uint8Array(0);
  /** The higher of measured cpu and memory use as a share of capacity (0..1), or -1 if unmeasured. */
  usageShare = new Float64Array(0);

  /** Number of slots the arrays hold. */
  get capacity(): number {
    return this.classOf.length;
  }

  /** Makes room for at least `slots` slots, keeping contents. */
  ensure(slots: number): void {
    if (slots <= this.capacity) return;
    const size = Math.max(slots, this.capacity * 2, 64);
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a);
      return b;
    };
    const f = (n: number) => new Float64Array(n);
    this.classOf = grow(this.classOf, (n) => new Int32Array(n));
    this.allocCpu = grow(this.allocCpu, f);
    this.allocMemory = grow(this.allocMemory, f);
    this.allocDisk = grow(this.allocDisk, f);
    this.invAllocCpu = grow(this.invAllocCpu, f);
    this.invAllocMemory = grow(this.invAllocMemory, f);
    this.invAllocDisk = grow(this.invAllocDisk, f);
    this.freeCpu = grow(this.freeCpu, f);
    this.freeMemory = grow(this.freeMemory, f);
    this.freeDisk = grow(this.freeDisk, f);
    this.capacityCpu = grow(this.capacityCpu, f);
    this.capacityMemory = grow(this.capacityMemory, f);
    this.usageCpu = grow(this.usageCpu, f);
    this.usageMemory = grow(this.usageMemory, f);
    this.hasUsage = grow(this.hasUsage, (n) => new Uint8Array(n));
    this.usageShare = grow(this.usageShare, f);
  }

  /** Copies slot `from` into slot `to` (used when a removal moves the last node into a hole). */
  move(from: number, to: number): void {
    this.classOf[to] = this.classOf[from]!;
    this.allocCpu[to] = this.allocCpu[from]!;
    this.allocMemory[to] = this.allocMemory[from]!;
    this.allocDisk[to] = this.allocDisk[from]!;
    this.invAllocCpu[to] = this.invAllocCpu[from]!;
    this.invAllocMemory[to] = this.invAllocMemory[from]!;
    this.invAllocDisk[to] = this.invAllocDisk[from]!;
    this.freeCpu[to] = this.freeCpu[from]!;
    this.freeMemory[to] = this.freeMemory[from]!;
    this.freeDisk[to] = this.freeDisk[from]!;
    this.capacityCpu[to] = this.capacityCpu[from]!;
    this.capacityMemory[to] = this.capacityMemory[from]!;
    this.usageCpu[to] = this.usageCpu[from]!;
    this.usageMemory[to] = this.usageMemory[from]!;
    this.hasUsage[to] = this.hasUsage[from]!;
    this.usageShare[to] = this.usageShare[from]!;
  }
}
