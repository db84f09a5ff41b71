import { type FilterFailure, PackedVerdicts } from "../diagnosis/node-verdicts.js";
import { type ReasonSlotInfo, RecordedDiagnosis, type ScorerInfo } from "../diagnosis/recorded-diagnosis.js";
import type { CompiledRequest } from "./compiled-request.js";
import type { Pipeline } from "./pipeline.js";
import type { ResourceExhaustion, WeightedScorer } from "./plugin.js";

/** What one cycle established, in the cycle's own buffers. */
export interface CycleOutcome {
  readonly request: CompiledRequest;
  readonly replica: number;
  readonly generation: number;
  readonly nodesEvaluated: number;
  readonly feasibleNodes: number;
  readonly scoredNodes: number;
  /** Count per reason slot of the pipeline. */
  readonly counts: Int32Array;
  readonly exhaustion: readonly ResourceExhaustion[];
  /** Node ids of the candidates, best first. */
  readonly candidateIds: readonly string[];
  /** Per candidate, flat: total × 100 (integer), then one score per active scorer. */
  readonly candidateNumbers: readonly number[];
  /** The scorers that took part: the first `scorerCount` entries. */
  readonly scorers: readonly WeightedScorer[];
  readonly scorerCount: number;
  readonly decidedAtMs: number;
  /** The nodes to record, with every filter each failed (empty: feasible). */
  readonly verdicts: readonly { nodeId: string; failures: readonly FilterFailure[] }[];
}

/**
 * Turns cycle outcomes into {@link RecordedDiagnosis} values, sharing everything that repeats
 * between decisions: the pipeline's (plugin, reason) names, each request's subjects, and the list
 * of scorers that took part.
 */
export class DiagnosisRecorder {
  private readonly slots: ReasonSlotInfo[];
  /** Rank of each slot when ordered by reason code, then plugin: the tie-break of equal counts. */
  private readonly rank: Int32Array;
  private readonly subjects = new WeakMap<CompiledRequest, (string | undefined)[]>();
  private readonly scorerLists = new Map<number, ScorerInfo[]>();
  private readonly scorerBit = new Map<WeightedScorer, number>();
  /** Scratch: the reason slots with a count, in diagnosis order. */
  private readonly order: Int32Array;
  /** Reason slot by "plugin reason". */
  private readonly slotByName = new Map<string, number>();

  constructor(private readonly pipeline: Pipeline) {
    pipeline.scorers.forEach((s, i) => {
      this.scorerBit.set(s, 2 ** i);
    });
    this.slots = pipeline.reasonSlots.map((s) => ({ plugin: s.filter.name, reason: s.reason }));
    this.slots.forEach((s, i) => {
      this.slotByName.set(`${s.plugin} ${s.reason}`, i);
    });
    const order = this.slots.map((_, i) => i);
    order.sort((a, b) => {
      const x = this.slots[a]!;
      const y = this.slots[b]!;
      if (x.reason !== y.reason) return x.reason < y.reason ? -1 : 1;
      return x.plugin < y.plugin ? -1 : x.plugin > y.plugin ? 1 : 0;
    });
    this.rank = new Int32Array(this.slots.length);
    this.order = new Int32Array(this.slots.length);
    order.forEach((slot, r) => {
      this.rank[slot] = r;
    });
  }

  /** Records one decision. */
  record(o: CycleOutcome): RecordedDiagnosis {
    // Non-zero slots by count (highest first), then by reason: an insertion sort over a handful
    // of entries, into a reused buffer (Array.prototype.sort allocates).
    const order = this.order;
    const c = o.counts;
    const rank = this.rank;
    let k = 0;
    for (let i = 0; i < c.length; i++) {
      if (c[i]! === 0) continue;
      let pos = k++;
      while (pos > 0) {
        const prev = order[pos - 1]!;
        if (c[prev]! > c[i]! || (c[prev]! === c[i]! && rank[prev]! < rank[i]!)) break;
        order[pos] = prev;
        pos--;
      }
      order[pos] = i;
    }
    const data = RecordedDiagnosis.pack(order, k, c, o.exhaustion, o.candidateIds.length, o.candidateNumbers);
    return new RecordedDiagnosis(
      o.request.workloadId,
      o.replica,
      o.generation,
      o.nodesEvaluated,
      o.feasibleNodes,
      o.scoredNodes,
      data,
      o.candidateIds,
      this.slots,
      this.subjectsOf(o.request),
      this.scorerList(o.scorers, o.scorerCount),
      o.decidedAtMs,
      PackedVerdicts.pack(o.verdicts, (plugin, reason) => this.slotByName.get(`${plugin} ${reason}`) ?? 0),
    );
  }

  private subjectsOf(request: CompiledRequest): (string | undefined)[] {
    let s = this.subjects.get(request);
    if (s === undefined) {
      s = this.pipeline.reasonSlots.map((slot) => slot.filter.subject?.(request, slot.index));
      this.subjects.set(request, s);
    }
    return s;
  }

  private scorerList(scorers: readonly WeightedScorer[], count: number): ScorerInfo[] {
    let key = 0;
    for (let i = 0; i < count; i++) key += this.scorerBit.get(scorers[i]!) ?? 0;
    let list = this.scorerLists.get(key);
    if (list === undefined) {
      list = scorers.slice(0, count).map((s) => ({ plugin: s.scorer.name, weight: s.weight }));
      this.scorerLists.set(key, list);
    }
    return list;
  }
}
