import type { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";
import { setBit, wordsFor } from "../snapshot/node-bitset.js";
import type { NodeClassRegistry } from "../snapshot/node-classes.js";
import type { CompiledRequest } from "./compiled-request.js";
import type { Placed } from "./pipeline.js";
import type { StaticFilter } from "./plugin.js";

/**
 * Static filter verdicts for one request shape over every node class: a mask per (class,
 * filter), whether the class passes all static filters, and the resulting counts per reason
 * (class size × failure), which stay valid until a class gains or loses a member.
 */
export class StaticVerdicts {
  /** masks[class × filters + filter] */
  masks = new Int32Array(0);
  /** 1 when the class passes every static filter. */
  ok = new Uint8Array(0);
  computed = 0;
  /** Counts per reason slot of the pipeline (static slots only are non-zero). */
  readonly counts: Int32Array;
  countsVersion = -1;
  /** Bit per slot: the node's class passes every static filter. */
  okBits = new Uint32Array(0);
  bitsVersion = -1;

  constructor(totalReasons: number) {
    this.counts = new Int32Array(totalReasons);
  }
}

/** The largest number of request shapes kept before the cache starts over. */
export const maxCachedShapes = 4096;

/**
 * Caches {@link StaticVerdicts} by the request fields the static filters read (their
 * `cacheKey`s), so every request with the same shape — whatever its workload, resources or
 * replica — shares one evaluation per node class. New classes are evaluated lazily; classes never
 * change, so nothing needs invalidating.
 */
export class StaticFilterCache {
  private readonly entries = new Map<string, StaticVerdicts>();
  private readonly keys = new WeakMap<CompiledRequest, string>();

  constructor(
    private readonly filters: readonly Placed<StaticFilter>[],
    private readonly totalReasons: number,
  ) {}

  /** Number of cached request shapes. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The verdicts for `request` over every class of the snapshot, with counts for current class
   * sizes and the per-slot bitset for the current slot assignment.
   */
  verdicts(request: CompiledRequest, snapshot: ClusterSnapshot): StaticVerdicts {
    const registry = snapshot.classes;
    let key = this.keys.get(request);
    if (key === undefined) {
      key = this.filters.map((f) => f.filter.cacheKey(request)).join("\u0004");
      this.keys.set(request, key);
    }
    let v = this.entries.get(key);
    if (v === undefined) {
      if (this.entries.size >= maxCachedShapes) this.entries.clear();
      v = new StaticVerdicts(this.totalReasons);
      this.entries.set(key, v);
    }
    const classes = registry.all;
    if (v.computed < classes.length) this.extend(v, request, registry);
    if (v.countsVersion !== registry.sizeVersion) this.recount(v, registry);
    if (v.bitsVersion !== snapshot.slotVersion) this.rebuildBits(v, snapshot);
    return v;
  }

  private rebuildBits(v: StaticVerdicts, snapshot: ClusterSnapshot): void {
    const n = snapshot.nodeCount;
    const words = wordsFor(snapshot.columns.capacity);
    if (v.okBits.length < words) v.okBits = new Uint32Array(words);
    else v.okBits.fill(0);
    const classOf = snapshot.columns.classOf;
    for (let s = 0; s < n; s++) if (v.ok[classOf[s]!] === 1) setBit(v.okBits, s);
    v.bitsVersion = snapshot.slotVersion;
  }

  private extend(v: StaticVerdicts, request: CompiledRequest, registry: NodeClassRegistry): void {
    const classes = registry.all;
    const nf = this.filters.length;
    if (v.ok.length < classes.length) {
      const size = Math.max(classes.length, v.ok.length * 2, 16);
      const masks = new Int32Array(size * nf);
      masks.set(v.masks);
      const ok = new Uint8Array(size);
      ok.set(v.ok);
      v.masks = masks;
      v.ok = ok;
    }
    for (let c = v.computed; c < classes.length; c++) {
      let pass = 1;
      for (let f = 0; f < nf; f++) {
        const mask = this.filters[f]!.filter.check(classes[c]!, request);
        v.masks[c * nf + f] = mask;
        if (mask !== 0) pass = 0;
      }
      v.ok[c] = pass;
    }
    v.computed = classes.length;
    v.countsVersion = -1;
    v.bitsVersion = -1;
  }

  private recount(v: StaticVerdicts, registry: NodeClassRegistry): void {
    v.counts.fill(0);
    const nf = this.filters.length;
    for (const cls of registry.all) {
      if (cls.size === 0) continue;
      for (let f = 0; f < nf; f++) {
        const mask = v.masks[cls.id * nf + f]!;
        if (mask === 0) continue;
        const base = this.filters[f]!.base;
        for (let bit = 0; mask >> bit !== 0; bit++) if ((mask >> bit) & 1) v.counts[base + bit]! += cls.size;
      }
    }
    v.countsVersion = registry.sizeVersion;
  }
}
