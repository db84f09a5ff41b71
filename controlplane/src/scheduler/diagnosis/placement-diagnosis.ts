import type { ResourceExhaustion } from "../framework/plugin.js";
import type { ReasonCode } from "../framework/reasons.js";
import type { NodeVerdict } from "./node-verdicts.js";

/** How many nodes one filter rejected for one reason. A node failing several filters counts under each. */
export interface FilterCount {
  /** The plugin that said no. */
  readonly plugin: string;
  readonly reason: ReasonCode;
  readonly count: number;
  /** What the reason is about for this request (`kvm`, `tcp/8080`, `zone maxSkew 1`), if anything. */
  readonly subject?: string;
}

/** One scorer's say about a candidate. */
export interface ScoreEntry {
  readonly plugin: string;
  /** 0..100. */
  readonly score: number;
  readonly weight: number;
}

/** A scored node: its weighted mean score (0..100) and each scorer's part. */
export interface Candidate {
  readonly nodeId: string;
  readonly total: number;
  readonly scores: readonly ScoreEntry[];
}

/**
 * The explanation of one placement decision, recorded for every replica placed or left pending
 * (Nomad's AllocMetric, kube's FitError, as data). Structured for machines; `message` renders it
 * for people.
 *
 * Invariants: `nodesEvaluated` is every node in the snapshot (all of them are filtered, even when
 * only a sample is scored); `nodesEvaluated − feasibleNodes` nodes failed at least one filter, and
 * each of those is counted under every reason it failed; `scoredNodes ≤ feasibleNodes`;
 * `candidates` are the best scored nodes, best first, at most a few; `winner` is the first
 * candidate, or null when no node is feasible.
 */
export interface PlacementDiagnosis {
  readonly workloadId: string;
  readonly replica: number;
  /** Snapshot generation the decision was made against. */
  readonly generation: number;
  readonly nodesEvaluated: number;
  readonly feasibleNodes: number;
  readonly scoredNodes: number;
  /** Sorted by count, highest first, then by reason. */
  readonly filterCounts: readonly FilterCount[];
  /** Dimensions some node was short of, in cpu, memory, disk order. */
  readonly exhaustion: readonly ResourceExhaustion[];
  readonly candidates: readonly Candidate[];
  readonly winner: string | null;
  /** ISO-8601 time of the decision. */
  readonly decidedAt: string;
  readonly message: string;
  /**
   * What the filters said on some of the nodes, at the decision: at most 64 (`MAX_NODE_VERDICTS`),
   * the scored feasible nodes first (candidates best first), then refused nodes in slot order.
   */
  readonly nodes: readonly NodeVerdict[];
}

/** Orders filter counts as diagnoses list them: most nodes first, then by reason code, then plugin. */
export function compareFilterCounts(a: FilterCount, b: FilterCount): number {
  if (a.count !== b.count) return b.count - a.count;
  if (a.reason !== b.reason) return a.reason < b.reason ? -1 : 1;
  return a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0;
}
