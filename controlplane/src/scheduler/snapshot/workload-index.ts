import {
  type CompiledExpression,
  compileSelector,
  expressionsKey,
  type LabelMap,
  type LabelSelector,
  matchesAll,
  toLabelMap,
} from "../model/label-selector.js";
import type { NodeEntry, Reservation } from "./node-entry.js";

/** A selector in compiled form with its canonical text. */
export interface CompiledSelector {
  readonly expressions: readonly CompiledExpression[];
  readonly key: string;
}

/**
 * A workload's labels and anti-affinity selectors in compiled form. The engine compiles them once
 * per request; `reserve` accepts the plain form and compiles.
 */
export class WorkloadTraits {
  private canonical: string | undefined;
  /** Index tokens of the labels (`key\0value` and `key\0*`), to find who avoids them. */
  readonly tokens: readonly string[];

  constructor(
    readonly labels: LabelMap,
    /** Selectors of workloads this one never shares a node with. */
    readonly avoids: readonly CompiledSelector[],
  ) {
    const tokens: string[] = [];
    for (const [k, v] of labels) tokens.push(pairKey(k, v), `${k}\u0000*`);
    this.tokens = tokens;
  }

  /** Canonical text of labels and avoids; equal traits have equal keys. */
  get key(): string {
    if (this.canonical === undefined) {
      const labelText = [...this.labels].map(([k, v]) => `${k}=${v}`).sort();
      const avoidText = this.avoids.map((s) => s.key).sort();
      this.canonical = `${labelText.join(",")}|${avoidText.join("|")}`;
    }
    return this.canonical;
  }
}

/** Compiles labels and anti-affinity selectors into traits. */
export function compileTraits(
  labels: Readonly<Record<string, string>> | undefined,
  avoids: readonly LabelSelector[] | undefined,
): WorkloadTraits {
  const compiled = (avoids ?? []).map((s) => {
    const expressions = compileSelector(s);
    return { expressions, key: expressionsKey(expressions) };
  });
  return new WorkloadTraits(toLabelMap(labels), compiled);
}

function bump(counts: Map<string, number>, value: string | undefined, n: number): void {
  if (value === undefined) return;
  const c = (counts.get(value) ?? 0) + n;
  if (c > 0) counts.set(value, c);
  else counts.delete(value);
}

/** A workload with at least one placed replica. */
export class WorkloadRecord {
  /** The tallies the record contributes to (set while indexed). */
  tallies: Tally[] = [];
  /** Placed replicas by index. */
  readonly replicas = new Map<number, Reservation>();
  /** Replicas per node. */
  readonly nodeCounts = new Map<NodeEntry, number>();
  /** Replicas per value of a node label (the spread keys asked for), kept current once asked. */
  private readonly byLabel = new Map<string, Map<string, number>>();
  constructor(
    readonly id: string,
    public traits: WorkloadTraits,
  ) {}

  /**
   * Replicas per value of node label `key` (nodes without the label are not counted). Built on
   * first use in O(replicas), then kept current as replicas come and go and nodes are relabelled,
   * so a spread decision costs O(domains), not O(replicas).
   */
  countsByNodeLabel(key: string): ReadonlyMap<string, number> {
    let counts = this.byLabel.get(key);
    if (counts === undefined) {
      counts = new Map();
      for (const [entry, n] of this.nodeCounts) bump(counts, entry.cls.labels.get(key), n);
      this.byLabel.set(key, counts);
    }
    return counts;
  }

  /** Counts `n` more (or fewer, when negative) replicas on `entry` in the label counts. */
  countOnNode(entry: NodeEntry, n: number): void {
    for (const [key, counts] of this.byLabel) bump(counts, entry.cls.labels.get(key), n);
  }

  /** A node with `n` of the workload's replicas changed labels from `before` to `after`. */
  relabel(before: LabelMap, after: LabelMap, n: number): void {
    for (const [key, counts] of this.byLabel) {
      const [from, to] = [before.get(key), after.get(key)];
      if (from === to) continue;
      bump(counts, from, -n);
      bump(counts, to, n);
    }
  }
}

/** Replicas per node summed over a group of workloads (those with one label, or one selector). */
class Tally {
  readonly records = new Set<WorkloadRecord>();
  readonly nodeCounts = new Map<NodeEntry, number>();
  constructor(readonly selector?: CompiledSelector) {}

  addNode(entry: NodeEntry, n: number): void {
    this.nodeCounts.set(entry, (this.nodeCounts.get(entry) ?? 0) + n);
  }

  removeNode(entry: NodeEntry, n: number): void {
    const count = (this.nodeCounts.get(entry) ?? 0) - n;
    if (count > 0) this.nodeCounts.set(entry, count);
    else this.nodeCounts.delete(entry);
  }

  /** Visits nodes with a replica of the group other than `own`'s. */
  forEachNode(own: WorkloadRecord | undefined, visit: (entry: NodeEntry) => void): void {
    const mine = own !== undefined && this.records.has(own) ? own.nodeCounts : undefined;
    if (mine === undefined) {
      for (const entry of this.nodeCounts.keys()) visit(entry);
      return;
    }
    this.nodeCounts.forEach((count, entry) => {
      if (count > (mine.get(entry) ?? 0)) visit(entry);
    });
  }
}

function pairKey(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

/** The index tokens under which a selector can match: `key\0value` for an `In`, `key\0` + `*` for `Exists`. */
function seedTokens(selector: readonly CompiledExpression[]): string[] | undefined {
  const seed = selector.find((e) => e.operator === "In" || e.operator === "Exists");
  if (seed === undefined) return undefined;
  if (seed.operator === "Exists") return [`${seed.key}\u0000*`];
  return [...seed.values].map((v) => pairKey(seed.key, v));
}

/**
 * Placed workloads by id, with replica tallies per node for every label pair (to find the nodes
 * running workloads a selector matches) and for every distinct anti-affinity selector (to find the
 * nodes running workloads that avoid a given label set). Lookups cost the number of distinct nodes
 * in the matching tallies, not the number of workloads. A selector without an `In`/`Exists`
 * expression cannot be seeded from the index and is checked against every placed workload (the
 * slow path).
 */
export class WorkloadIndex {
  private readonly records = new Map<string, WorkloadRecord>();
  private readonly byLabel = new Map<string, Map<string, Tally>>();
  private readonly avoidGroups = new Map<string, Tally>();
  private readonly avoidersByToken = new Map<string, Set<Tally>>();
  private readonly unseededAvoiders = new Set<Tally>();

  /** The record of a workload with placed replicas. */
  get(workloadId: string): WorkloadRecord | undefined {
    return this.records.get(workloadId);
  }

  /** Number of workloads with at least one placed replica. */
  get size(): number {
    return this.records.size;
  }

  /** Counts a reservation in its workload's record, creating or re-indexing the record as needed. */
  add(reservation: Reservation, traits: WorkloadTraits): void {
    let record = this.records.get(reservation.workloadId);
    if (record === undefined) {
      record = new WorkloadRecord(reservation.workloadId, traits);
      this.records.set(record.id, record);
      this.index(record);
    } else if (record.traits !== traits && record.traits.key !== traits.key) {
      this.unindex(record);
      record.traits = traits;
      this.index(record);
    }
    record.replicas.set(reservation.replica, reservation);
    record.nodeCounts.set(reservation.entry, (record.nodeCounts.get(reservation.entry) ?? 0) + 1);
    record.countOnNode(reservation.entry, 1);
    for (const tally of record.tallies) tally.addNode(reservation.entry, 1);
  }

  /** Uncounts a reservation; a workload with no replica left leaves the index. */
  remove(reservation: Reservation): void {
    const record = this.records.get(reservation.workloadId);
    if (record === undefined || record.replicas.get(reservation.replica) !== reservation) return;
    for (const tally of record.tallies) tally.removeNode(reservation.entry, 1);
    record.countOnNode(reservation.entry, -1);
    record.replicas.delete(reservation.replica);
    const count = record.nodeCounts.get(reservation.entry) ?? 0;
    if (count > 1) record.nodeCounts.set(reservation.entry, count - 1);
    else record.nodeCounts.delete(reservation.entry);
    if (record.replicas.size === 0) {
      this.unindex(record);
      this.records.delete(record.id);
    }
  }

  /** A node's labels changed from `before` to `after`: keeps per-label replica counts current. */
  nodeRelabelled(entry: NodeEntry, before: LabelMap, after: LabelMap): void {
    const seen = new Set<string>();
    for (const r of entry.reservations) {
      if (seen.has(r.workloadId)) continue;
      seen.add(r.workloadId);
      const record = this.records.get(r.workloadId);
      const n = record?.nodeCounts.get(entry);
      if (record && n) record.relabel(before, after, n);
    }
  }

  /**
   * Visits each node running a replica of a workload other than `exceptId` whose labels match
   * `selector` (a node may be visited more than once).
   */
  forEachNodeMatching(selector: CompiledSelector, exceptId: string, visit: (entry: NodeEntry) => void): void {
    const e = selector.expressions;
    const only = e.length === 1 ? e[0]! : undefined;
    if (only?.operator === "In") {
      const own = this.records.get(exceptId);
      const byValue = this.byLabel.get(only.key);
      if (byValue) for (const v of only.values) byValue.get(v)?.forEachNode(own, visit);
      return;
    }
    this.forEachMatching(selector, exceptId, (r) => {
      for (const entry of r.nodeCounts.keys()) visit(entry);
    });
  }

  /**
   * Visits each node running a replica of a workload other than `exceptId` that avoids `labels`
   * (one of its anti-affinity selectors matches them).
   */
  forEachNodeAvoiding(traits: WorkloadTraits, exceptId: string, visit: (entry: NodeEntry) => void): void {
    if (this.avoidGroups.size === 0) return;
    const own = this.records.get(exceptId);
    for (const group of this.avoidingGroups(traits)) group.forEachNode(own, visit);
  }

  /** Calls `visit` for every placed workload other than `exceptId` whose labels match `selector`. */
  forEachMatching(selector: CompiledSelector, exceptId: string, visit: (r: WorkloadRecord) => void): void {
    const expressions = selector.expressions;
    const seed = expressions.find((x) => x.operator === "In" || x.operator === "Exists");
    const check = (r: WorkloadRecord) => {
      if (r.id !== exceptId && matchesAll(expressions, r.traits.labels)) visit(r);
    };
    if (seed === undefined) {
      for (const r of this.records.values()) check(r);
      return;
    }
    const byValue = this.byLabel.get(seed.key);
    if (byValue === undefined) return;
    if (seed.operator === "In") {
      for (const value of seed.values) byValue.get(value)?.records.forEach(check);
    } else for (const tally of byValue.values()) tally.records.forEach(check);
  }

  /** Calls `visit` for every placed workload other than `exceptId` with a selector matching `labels`. */
  forEachAvoiding(traits: WorkloadTraits, exceptId: string, visit: (r: WorkloadRecord) => void): void {
    const seen = new Set<WorkloadRecord>();
    for (const group of this.avoidingGroups(traits)) {
      for (const r of group.records) {
        if (r.id === exceptId || seen.has(r)) continue;
        seen.add(r);
        visit(r);
      }
    }
  }

  /** The avoid groups whose selector matches the labels of `traits`. */
  private avoidingGroups(traits: WorkloadTraits): Tally[] {
    const out: Tally[] = [];
    const labels = traits.labels;
    for (const g of this.unseededAvoiders) if (matchesAll(g.selector!.expressions, labels)) out.push(g);
    if (this.avoidersByToken.size === 0) return out;
    for (const token of traits.tokens) {
      const groups = this.avoidersByToken.get(token);
      if (groups === undefined) continue;
      for (const g of groups) if (!out.includes(g) && matchesAll(g.selector!.expressions, labels)) out.push(g);
    }
    return out;
  }

  /** Every tally the record contributes to. */
  private tallies(record: WorkloadRecord): Tally[] {
    const out: Tally[] = [];
    for (const [key, value] of record.traits.labels) out.push(this.byLabel.get(key)!.get(value)!);
    for (const s of new Set(record.traits.avoids.map((a) => a.key))) out.push(this.avoidGroups.get(s)!);
    return out;
  }

  private index(record: WorkloadRecord): void {
    for (const [key, value] of record.traits.labels) {
      let byValue = this.byLabel.get(key);
      if (byValue === undefined) {
        byValue = new Map();
        this.byLabel.set(key, byValue);
      }
      let tally = byValue.get(value);
      if (tally === undefined) {
        tally = new Tally();
        byValue.set(value, tally);
      }
      tally.records.add(record);
    }
    for (const selector of record.traits.avoids) {
      let group = this.avoidGroups.get(selector.key);
      if (group === undefined) {
        group = new Tally(selector);
        this.avoidGroups.set(selector.key, group);
        const tokens = seedTokens(selector.expressions);
        if (tokens === undefined) this.unseededAvoiders.add(group);
        else {
          for (const token of tokens) {
            let set = this.avoidersByToken.get(token);
            if (set === undefined) {
              set = new Set();
              this.avoidersByToken.set(token, set);
            }
            set.add(group);
          }
        }
      }
      group.records.add(record);
    }
    record.tallies = this.tallies(record);
    for (const tally of record.tallies) {
      for (const [entry, n] of record.nodeCounts) tally.addNode(entry, n);
    }
  }

  private unindex(record: WorkloadRecord): void {
    for (const tally of record.tallies) {
      for (const [entry, n] of record.nodeCounts) tally.removeNode(entry, n);
    }
    record.tallies = [];
    for (const [key, value] of record.traits.labels) {
      const byValue = this.byLabel.get(key)!;
      const tally = byValue.get(value)!;
      tally.records.delete(record);
      if (tally.records.size > 0) continue;
      byValue.delete(value);
      if (byValue.size === 0) this.byLabel.delete(key);
    }
    for (const selector of record.traits.avoids) {
      const group = this.avoidGroups.get(selector.key);
      if (group === undefined) continue;
      group.records.delete(record);
      if (group.records.size > 0) continue;
      this.avoidGroups.delete(selector.key);
      const tokens = seedTokens(selector.expressions);
      if (tokens === undefined) this.unseededAvoiders.delete(group);
      else {
        for (const token of tokens) {
          const set = this.avoidersByToken.get(token);
          set?.delete(group);
          if (set?.size === 0) this.avoidersByToken.delete(token);
        }
      }
    }
  }
}
