import {
  type FilterFailure,
  MAX_FEASIBLE_VERDICTS,
  MAX_NODE_VERDICTS,
  MAX_PLACED_VERDICTS,
  MAX_RECORDED_FAILURES,
} from "../diagnosis/node-verdicts.js";
import type { RecordedDiagnosis } from "../diagnosis/recorded-diagnosis.js";
import type { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";
import { clearBit, collectFrom, popcount, wordsFor } from "../snapshot/node-bitset.js";
import type { NodeEntry } from "../snapshot/node-entry.js";
import type { WorkloadRecord } from "../snapshot/workload-index.js";
import type { CompiledRequest } from "./compiled-request.js";
import { DiagnosisRecorder } from "./diagnosis-recorder.js";
import { failingFilters } from "./node-explanation.js";
import type { Pipeline } from "./pipeline.js";
import type { Cycle, NodeFilter, RejectSink, ResourceExhaustion, WeightedScorer } from "./plugin.js";
import { nodesToScore, type SamplingOptions, sampleStart } from "./sampling.js";
import { StaticFilterCache } from "./static-filter-cache.js";

const noExhaustion: readonly ResourceExhaustion[] = Object.freeze([]);

/** Settings of the decision procedure. */
export interface CycleOptions {
  readonly seed: number;
  readonly sampling: SamplingOptions;
  /** How many candidates a diagnosis keeps. */
  readonly maxCandidates: number;
  /** Milliseconds since the epoch. */
  readonly clock: () => number;
}

/** A decision: the diagnosis and, when a node was chosen, its entry. */
export interface Decision {
  readonly diagnosis: RecordedDiagnosis;
  readonly winner: NodeEntry | undefined;
}

class MutableCycle implements Cycle {
  snapshot: ClusterSnapshot;
  request!: CompiledRequest;
  replica = 0;
  id = 0;
  staticOk: Uint8Array = new Uint8Array(0);
  workload: WorkloadRecord | undefined;
  constructor(snapshot: ClusterSnapshot) {
    this.snapshot = snapshot;
  }
}

/** Counts rejections per reason and keeps the set of nodes not rejected so far. */
class Rejections implements RejectSink {
  /** Bit per slot: not rejected by any filter yet. */
  feasible = new Uint32Array(2);
  words = 0;
  counts: Int32Array;
  base = 0;
  constructor(totalReasons: number) {
    this.counts = new Int32Array(totalReasons);
  }
  reject(slot: number, reason: number): void {
    clearBit(this.feasible, slot);
    this.counts[this.base + reason]!++;
  }
  rejectAllBut(passing: Uint32Array, reason: number, failing: number): void {
    const f = this.feasible;
    for (let w = 0; w < this.words; w++) f[w]! &= passing[w]!;
    this.counts[this.base + reason]! += failing;
  }
  rejectAll(failing: Uint32Array, reason: number, count: number): void {
    const f = this.feasible;
    for (let w = 0; w < this.words; w++) f[w]! &= ~failing[w]!;
    this.counts[this.base + reason]! += count;
  }
}

/**
 * The filters and scorers that take part in the current cycle, after `prepare`: the first
 * `nodeFilterCount` / `scorerCount` entries (fixed arrays, so a cycle allocates nothing here).
 */
export class ActivePlugins {
  readonly nodeFilters: { filter: NodeFilter; base: number }[];
  nodeFilterCount = 0;
  readonly scorers: WeightedScorer[];
  scorerCount = 0;
  constructor(pipeline: Pipeline) {
    this.nodeFilters = [...pipeline.nodeFilters];
    this.scorers = [...pipeline.scorers];
  }
}

/** What {@link SchedulingCycle.begin} set up; one object, reused by every cycle. */
export interface CycleSetup {
  readonly cycle: Cycle;
  /** Static verdict per (class, static filter): masks[class × filters + filter]. */
  masks: Int32Array;
  /** Bit per slot: the node's class passes every static filter. */
  okBits: Uint32Array;
  readonly active: ActivePlugins;
}

/**
 * Runs the pipeline for one replica at a time against a snapshot and turns the outcome into a
 * {@link RecordedDiagnosis}. It does not reserve: the engine does, so the same code serves
 * placement and dry run.
 *
 * Per decision: the feasible set starts as a bitset of the nodes whose class passes the static
 * filters (verdicts and their counts cached per node class and request shape); node filters
 * reject single nodes or intersect the set with bitsets (resources: kept current by the snapshot
 * per requested amount; spread: the nodes of a domain; ports: their holders), every rejection
 * counted per reason; a window of the feasible nodes, in slot order from a slot derived from
 * (seed, workload, replica), is scored; the best total wins, ties going to the earliest node in
 * the window. No step visits every node one by one.
 */
export class SchedulingCycle {
  private readonly cycle: MutableCycle;
  private readonly staticCache: StaticFilterCache;
  private readonly sink: Rejections;
  private window = new Int32Array(64);
  private totals = new Float64Array(64);
  private scoreBufs: Float64Array[];
  private readonly active: ActivePlugins;
  private readonly setup: CycleSetup;
  private topIndex: Int32Array;
  private topValue: Float64Array;
  private readonly recorder: DiagnosisRecorder;
  private weightSum = 0;
  /** Scratch for the recorder, which copies it. */
  private readonly candidateNumbers: number[] = [];
  private readonly weights: Float64Array;

  constructor(
    readonly pipeline: Pipeline,
    readonly snapshot: ClusterSnapshot,
    readonly options: CycleOptions,
  ) {
    this.cycle = new MutableCycle(snapshot);
    this.active = new ActivePlugins(pipeline);
    this.setup = { cycle: this.cycle, masks: new Int32Array(0), okBits: new Uint32Array(0), active: this.active };
    const total = pipeline.reasonSlots.length;
    this.staticCache = new StaticFilterCache(pipeline.staticFilters, total);
    this.sink = new Rejections(total);
    this.scoreBufs = pipeline.scorers.map(() => new Float64Array(64));
    this.topIndex = new Int32Array(options.maxCandidates);
    this.topValue = new Float64Array(options.maxCandidates);
    this.recorder = new DiagnosisRecorder(pipeline);
    this.weights = new Float64Array(pipeline.scorers.length);
  }

  /** Number of cached static request shapes (for benchmarks). */
  get cachedShapes(): number {
    return this.staticCache.size;
  }

  /**
   * Sets up a cycle for (request, replica): the static verdicts (per class masks, the per-slot
   * bitset, their counts) and `prepare` of every node filter. Used by {@link decide} and by
   * single-node explanations.
   */
  begin(request: CompiledRequest, replica: number): CycleSetup {
    const c = this.cycle;
    c.request = request;
    c.replica = replica;
    c.id = (c.id + 1) | 0 || 1;
    c.workload = this.snapshot.workloads.get(request.workloadId);
    const verdicts = this.staticCache.verdicts(request, this.snapshot);
    c.staticOk = verdicts.ok;
    this.sink.counts.set(verdicts.counts);
    const active = this.active;
    active.nodeFilterCount = 0;
    active.scorerCount = 0;
    for (const p of this.pipeline.nodeFilters)
      if (p.filter.prepare(c)) active.nodeFilters[active.nodeFilterCount++] = p;
    const setup = this.setup;
    setup.masks = verdicts.masks;
    setup.okBits = verdicts.okBits;
    return setup;
  }

  /** Decides where replica `replica` of `request` goes now, with its diagnosis. */
  decide(request: CompiledRequest, replica: number): Decision {
    const setup = this.begin(request, replica);
    const { cycle, okBits, active } = setup;
    const snapshot = this.snapshot;
    const n = snapshot.nodeCount;
    this.startFeasible(okBits, n);
    this.filterNodes(cycle, active);
    const nf = popcount(this.sink.feasible, this.sink.words);
    let exhaustion: readonly ResourceExhaustion[] = noExhaustion;
    for (let f = 0; f < active.nodeFilterCount; f++) {
      const x = active.nodeFilters[f]!.filter.exhaustion?.(cycle);
      if (x && x.length > 0) exhaustion = exhaustion.length === 0 ? x : [...exhaustion, ...x];
    }

    const candidateIds: string[] = [];
    const candidateNumbers = this.candidateNumbers;
    candidateNumbers.length = 0;
    let winner: NodeEntry | undefined;
    let scored = 0;
    let kept = 0;
    if (nf > 0) {
      scored = nodesToScore(n, nf, this.options.sampling);
      const start = sampleStart(this.options.seed, request.idHash, replica, n);
      collectFrom(this.sink.feasible, n, start, scored, this.window);
      const k = this.score(cycle, scored);
      kept = k;
      const weightSum = this.weightSum;
      for (let t = 0; t < k; t++) {
        const j = this.topIndex[t]!;
        const entry = snapshot.entryAt(this.window[j]!);
        if (t === 0) winner = entry;
        candidateIds.push(entry.id);
        candidateNumbers.push(weightSum > 0 ? Math.round((100 * this.totals[j]!) / weightSum) : 0);
        for (let i = 0; i < active.scorerCount; i++) candidateNumbers.push(this.scoreBufs[i]![j]!);
      }
    }
    const diagnosis = this.recorder.record({
      request,
      replica,
      generation: snapshot.generation,
      nodesEvaluated: n,
      feasibleNodes: nf,
      scoredNodes: scored,
      counts: this.sink.counts,
      exhaustion,
      candidateIds,
      candidateNumbers,
      scorers: active.scorers,
      scorerCount: active.scorerCount,
      decidedAtMs: this.options.clock(),
      verdicts: this.nodeVerdicts(setup, scored, kept),
    });
    return { diagnosis, winner };
  }

  /**
   * The nodes a diagnosis records (at most {@link MAX_NODE_VERDICTS}, a placement at most
   * {@link MAX_PLACED_VERDICTS}): the candidates best first, the rest of the scored window in window
   * order (at most {@link MAX_FEASIBLE_VERDICTS} feasible nodes in all), then refused nodes in slot
   * order, each whole with every filter it fails, while the failures stay within
   * {@link MAX_RECORDED_FAILURES}.
   * Bounded work: the refused nodes are found by scanning the feasible bitset, and only the
   * recorded ones are checked filter by filter.
   */
  private nodeVerdicts(
    setup: CycleSetup,
    scored: number,
    kept: number,
  ): { nodeId: string; failures: readonly FilterFailure[] }[] {
    const snapshot = this.snapshot;
    const out: { nodeId: string; failures: readonly FilterFailure[] }[] = [];
    const noFailures: readonly FilterFailure[] = [];
    const top = this.topIndex;
    const limit = kept > 0 ? MAX_PLACED_VERDICTS : MAX_NODE_VERDICTS;
    for (let t = 0; t < kept && out.length < MAX_FEASIBLE_VERDICTS; t++)
      out.push({ nodeId: snapshot.entryAt(this.window[top[t]!]!).id, failures: noFailures });
    for (let j = 0; j < scored && out.length < MAX_FEASIBLE_VERDICTS; j++) {
      let candidate = false;
      for (let t = 0; t < kept; t++) if (top[t] === j) candidate = true;
      if (!candidate) out.push({ nodeId: snapshot.entryAt(this.window[j]!).id, failures: noFailures });
    }
    const n = snapshot.nodeCount;
    const feasible = this.sink.feasible;
    let failureCount = 0;
    for (let w = 0; w < this.sink.words && out.length < limit; w++) {
      let refused = ~feasible[w]! >>> 0;
      while (refused !== 0 && out.length < limit) {
        const bit = 31 - Math.clz32(refused & -refused);
        refused = (refused & ~(1 << bit)) >>> 0;
        const slot = w * 32 + bit;
        if (slot >= n) break;
        const entry = snapshot.entryAt(slot);
        const failures = failingFilters(this.pipeline, setup, entry);
        failureCount += failures.length;
        if (failureCount > MAX_RECORDED_FAILURES) return out;
        out.push({ nodeId: entry.id, failures });
      }
    }
    return out;
  }

  /** Starts the feasible set as the nodes whose class passes the static filters. */
  private startFeasible(okBits: Uint32Array, n: number): void {
    const sink = this.sink;
    const words = wordsFor(n);
    if (sink.feasible.length < words) sink.feasible = new Uint32Array(Math.max(words, sink.feasible.length * 2));
    sink.feasible.set(okBits.subarray(0, words));
    sink.words = words;
    if (this.window.length < n) {
      const size = Math.max(n, this.window.length * 2);
      this.window = new Int32Array(size);
      this.totals = new Float64Array(size);
      this.scoreBufs = this.scoreBufs.map(() => new Float64Array(size));
    }
  }

  private filterNodes(cycle: Cycle, active: ActivePlugins): void {
    const sink = this.sink;
    for (let f = 0; f < active.nodeFilterCount; f++) {
      const { filter, base } = active.nodeFilters[f]!;
      sink.base = base;
      filter.run(cycle, sink);
    }
  }

  /**
   * Scores the window with every active scorer, then in one pass computes each node's weighted
   * total and keeps the best few (earlier window positions win ties). Returns how many were kept.
   */
  private score(cycle: Cycle, count: number): number {
    const active = this.active.scorers;
    let na = 0;
    for (const s of this.pipeline.scorers) if (s.scorer.prepare(cycle)) active[na++] = s;
    this.active.scorerCount = na;
    let weightSum = 0;
    for (let i = 0; i < na; i++) {
      const { scorer, weight } = active[i]!;
      scorer.score(cycle, this.window, count, this.scoreBufs[i]!);
      this.weights[i] = weight;
      weightSum += weight;
    }
    this.weightSum = weightSum;
    const totals = this.totals;
    const bufs = this.scoreBufs;
    const weights = this.weights;
    const max = this.topIndex.length;
    const idx = this.topIndex;
    const val = this.topValue;
    let k = 0;
    for (let j = 0; j < count; j++) {
      let v = 0;
      for (let i = 0; i < na; i++) v += weights[i]! * bufs[i]![j]!;
      totals[j] = v;
      if (k === max && v <= val[k - 1]!) continue;
      let pos = k < max ? k++ : k - 1;
      while (pos > 0 && val[pos - 1]! < v) {
        val[pos] = val[pos - 1]!;
        idx[pos] = idx[pos - 1]!;
        pos--;
      }
      val[pos] = v;
      idx[pos] = j;
    }
    return k;
  }
}
