import type { ScoreEntry } from "../diagnosis/placement-diagnosis.js";
import type { NodeEntry } from "../snapshot/node-entry.js";
import type { CompiledRequest } from "./compiled-request.js";
import type { Pipeline } from "./pipeline.js";
import type { FilterDetail } from "./plugin.js";
import type { ReasonCode } from "./reasons.js";
import type { CycleSetup, SchedulingCycle } from "./scheduling-cycle.js";

/** One failed filter on one node, with its numbers. */
export interface FilterStatus {
  readonly plugin: string;
  readonly reason: ReasonCode;
  readonly detail: FilterDetail;
}

/**
 * Why a replica can or cannot go on one given node now: every failing filter (not only the first)
 * with its sidecar numbers, and, when the node is feasible, what each scorer would give it.
 */
export interface NodeExplanation {
  readonly nodeId: string;
  readonly workloadId: string;
  readonly replica: number;
  readonly feasible: boolean;
  readonly statuses: readonly FilterStatus[];
  /** Scores of the node on its own (empty when infeasible). */
  readonly scores: readonly ScoreEntry[];
}

function bits(mask: number): number[] {
  const out: number[] = [];
  for (let bit = 0; mask >> bit !== 0; bit++) if ((mask >> bit) & 1) out.push(bit);
  return out;
}

/**
 * Explains nodes for (request, replica) with the same plugins and state a decision would use:
 * one cycle is set up, then every given node is checked filter by filter.
 */
export function explainNodes(
  runner: SchedulingCycle,
  request: CompiledRequest,
  replica: number,
  entries: readonly NodeEntry[],
): NodeExplanation[] {
  const setup = runner.begin(request, replica);
  const { cycle } = setup;
  const scorers = runner.pipeline.scorers.filter(({ scorer }) => scorer.prepare(cycle));
  const slots = new Int32Array(1);
  const out = new Float64Array(1);
  return entries.map((entry) => {
    const statuses = failingFilters(runner.pipeline, setup, entry);
    const feasible = statuses.length === 0;
    const scores: ScoreEntry[] = [];
    if (feasible) {
      slots[0] = entry.slot;
      for (const { scorer, weight } of scorers) {
        scorer.score(cycle, slots, 1, out);
        scores.push({ plugin: scorer.name, score: out[0]!, weight });
      }
    }
    return { nodeId: entry.id, workloadId: request.workloadId, replica, feasible, statuses, scores };
  });
}

/**
 * Every filter `entry` fails in the cycle `setup` (after {@link SchedulingCycle.begin}), in pipeline
 * order, with the sidecar numbers: the static verdicts cached for its class, then every active node
 * filter's `check`. Decisions use it for the nodes their diagnosis records; explanations for theirs.
 */
export function failingFilters(pipeline: Pipeline, setup: CycleSetup, entry: NodeEntry): FilterStatus[] {
  const { cycle, masks, active } = setup;
  const request = cycle.request;
  const statics = pipeline.staticFilters;
  const statuses: FilterStatus[] = [];
  statics.forEach(({ filter }, f) => {
    for (const bit of bits(masks[entry.cls.id * statics.length + f]!)) {
      const subject = filter.subject?.(request, bit);
      statuses.push({ plugin: filter.name, reason: filter.reasons[bit]!, detail: subject ? { subject } : {} });
    }
  });
  for (let f = 0; f < active.nodeFilterCount; f++) {
    const { filter } = active.nodeFilters[f]!;
    for (const bit of bits(filter.check(cycle, entry.slot))) {
      const subject = filter.subject?.(request, bit);
      const detail = filter.detail?.(cycle, entry.slot, bit) ?? (subject ? { subject } : {});
      statuses.push({ plugin: filter.name, reason: filter.reasons[bit]!, detail });
    }
  }
  return statuses;
}
