import type { ResourceExhaustion } from "../framework/plugin.js";
import type { ReasonCode } from "../framework/reasons.js";
import { dimensions, dimensionUnit } from "../model/resources.js";
import { renderDiagnosisMessage } from "./diagnosis-message.js";
import { type NodeVerdict, PackedVerdicts } from "./node-verdicts.js";
import type { Candidate, FilterCount, PlacementDiagnosis, ScoreEntry } from "./placement-diagnosis.js";

/** A (plugin, reason) pair of the pipeline, by count slot. Shared by every diagnosis. */
export interface ReasonSlotInfo {
  readonly plugin: string;
  readonly reason: ReasonCode;
}

/** A scorer that took part in a decision. Lists of these are shared between diagnoses. */
export interface ScorerInfo {
  readonly plugin: string;
  readonly weight: number;
}

/**
 * A {@link PlacementDiagnosis} as recorded by the engine: its numbers packed into one array of
 * small integers, its names (plugins, reasons, subjects, scorers) shared with every other
 * diagnosis. Reading a field builds it (so read once and keep the value if you read it often);
 * `toJSON()` (and so `JSON.stringify`) gives the plain object. A recorded diagnosis takes about
 * a tenth of the memory of the plain object, which is what lets a control plane keep one per
 * pending or placed replica at scale. The message is rendered on demand, from the structure.
 */
export class RecordedDiagnosis implements PlacementDiagnosis {
  constructor(
    readonly workloadId: string,
    readonly replica: number,
    readonly generation: number,
    readonly nodesEvaluated: number,
    readonly feasibleNodes: number,
    readonly scoredNodes: number,
    /** [nCounts, nExhaustion, nCandidates, counts (slot, count)…, exhaustion (dim, needed, best, short)…, candidates…] */
    private readonly data: readonly number[],
    private readonly candidateIds: readonly string[],
    private readonly slots: readonly ReasonSlotInfo[],
    /** Subject per reason slot, for this request. */
    private readonly subjects: readonly (string | undefined)[],
    private readonly scorers: readonly ScorerInfo[],
    private readonly decidedAtMs: number,
    /** The recorded nodes (at most 64 (`MAX_NODE_VERDICTS`)). */
    private readonly verdicts: PackedVerdicts = PackedVerdicts.empty,
  ) {}

  /**
   * Packs the numbers of a decision: the first `orderLength` reason slots of `order` (those with
   * a count, in diagnosis order) and the counts per slot, the exhaustion entries, and per candidate (best first) its total × 100 then
   * one score per scorer, flat.
   */
  static pack(
    order: Int32Array,
    orderLength: number,
    counts: Int32Array,
    exhaustion: readonly ResourceExhaustion[],
    candidates: number,
    candidateNumbers: readonly number[],
  ): number[] {
    // Sized exactly up front: a growing array keeps spare capacity, and these are kept by the thousand.
    const data: number[] = new Array(3 + 2 * orderLength + 4 * exhaustion.length + candidateNumbers.length);
    data[0] = orderLength;
    data[1] = exhaustion.length;
    data[2] = candidates;
    let i = 3;
    for (let o = 0; o < orderLength; o++) {
      const slot = order[o]!;
      data[i++] = slot;
      data[i++] = counts[slot]!;
    }
    for (const e of exhaustion) {
      data[i++] = dimensions.indexOf(e.dimension);
      data[i++] = e.needed;
      data[i++] = e.bestAvailable;
      data[i++] = e.nodesShort;
    }
    for (const x of candidateNumbers) data[i++] = x;
    return data;
  }

  get winner(): string | null {
    return this.candidateIds[0] ?? null;
  }

  get decidedAt(): string {
    return new Date(this.decidedAtMs).toISOString();
  }

  get filterCounts(): FilterCount[] {
    const out: FilterCount[] = [];
    const d = this.data;
    for (let i = 0; i < d[0]!; i++) {
      const slot = d[3 + 2 * i]!;
      const { plugin, reason } = this.slots[slot]!;
      const subject = this.subjects[slot];
      const count = d[4 + 2 * i]!;
      out.push(subject ? { plugin, reason, count, subject } : { plugin, reason, count });
    }
    return out;
  }

  get exhaustion(): ResourceExhaustion[] {
    const out: ResourceExhaustion[] = [];
    const d = this.data;
    const at = 3 + 2 * d[0]!;
    for (let i = 0; i < d[1]!; i++) {
      const o = at + 4 * i;
      const dimension = dimensions[d[o]!]!;
      out.push({
        dimension,
        needed: d[o + 1]!,
        bestAvailable: d[o + 2]!,
        unit: dimensionUnit[dimension],
        nodesShort: d[o + 3]!,
      });
    }
    return out;
  }

  get candidates(): Candidate[] {
    const d = this.data;
    const width = 1 + this.scorers.length;
    const at = 3 + 2 * d[0]! + 4 * d[1]!;
    return this.candidateIds.map((nodeId, c) => {
      const o = at + width * c;
      const scores: ScoreEntry[] = this.scorers.map((s, i) => ({
        plugin: s.plugin,
        score: d[o + 1 + i]!,
        weight: s.weight,
      }));
      return { nodeId, total: d[o]! / 100, scores };
    });
  }

  get nodes(): NodeVerdict[] {
    return this.verdicts.unpack(this.slots);
  }

  get message(): string {
    return renderDiagnosisMessage(this);
  }

  /** The same diagnosis for another replica (a sibling decided against the identical cluster). */
  forReplica(replica: number): RecordedDiagnosis {
    return new RecordedDiagnosis(
      this.workloadId,
      replica,
      this.generation,
      this.nodesEvaluated,
      this.feasibleNodes,
      this.scoredNodes,
      this.data,
      this.candidateIds,
      this.slots,
      this.subjects,
      this.scorers,
      this.decidedAtMs,
      this.verdicts,
    );
  }

  /** The plain object, for storage and the wire. */
  toJSON(): PlacementDiagnosis {
    return {
      workloadId: this.workloadId,
      replica: this.replica,
      generation: this.generation,
      nodesEvaluated: this.nodesEvaluated,
      feasibleNodes: this.feasibleNodes,
      scoredNodes: this.scoredNodes,
      filterCounts: this.filterCounts,
      exhaustion: this.exhaustion,
      candidates: this.candidates,
      winner: this.winner,
      decidedAt: this.decidedAt,
      message: this.message,
      nodes: this.nodes,
    };
  }
}
