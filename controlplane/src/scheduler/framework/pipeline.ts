import { invalid } from "@persys/schema";
import type { Filter, NodeFilter, PipelineStage, StaticFilter, WeightedScorer } from "./plugin.js";
import type { ReasonCode } from "./reasons.js";

/** A filter with the offset of its first reason in the cycle's count array. */
export interface Placed<F extends Filter> {
  readonly filter: F;
  readonly base: number;
}

/** One reason of one filter: a slot of the count array. */
export interface ReasonSlot {
  readonly filter: Filter;
  readonly reason: ReasonCode;
  /** Index of the reason in the filter's `reasons`. */
  readonly index: number;
}

/**
 * A pipeline: filters and weighted scorers in the order of the list it was defined from, split by
 * scope for the framework. Plugins keep per-cycle scratch state, so a pipeline belongs to one
 * engine and is not shared.
 */
export class Pipeline {
  readonly staticFilters: Placed<StaticFilter>[] = [];
  readonly nodeFilters: Placed<NodeFilter>[] = [];
  readonly scorers: WeightedScorer[] = [];
  /** Every (filter, reason), by count-array slot. */
  readonly reasonSlots: ReasonSlot[] = [];

  constructor(readonly stages: readonly PipelineStage[]) {
    // A plugin may both filter and score under one name (as kube's PodTopologySpread does).
    const names = new Set<string>();
    const violations: { path: string; reason: string }[] = [];
    stages.forEach((stage, i) => {
      const name = stage.scope === "score" ? stage.scorer.name : stage.name;
      const role = `${stage.scope === "score" ? "score" : "filter"}:${name}`;
      if (names.has(role)) violations.push({ path: `pipeline[${i}]`, reason: `plugin name ${name} is used twice` });
      names.add(role);
      if (stage.scope === "score") {
        if (!Number.isFinite(stage.weight) || stage.weight < 0) {
          violations.push({ path: `weights.${name}`, reason: "must be a finite number of at least 0" });
        } else if (stage.weight > 0) this.scorers.push(stage);
        return;
      }
      const base = this.reasonSlots.length;
      stage.reasons.forEach((reason, index) => {
        this.reasonSlots.push({ filter: stage, reason, index });
      });
      if (stage.reasons.length > 31)
        violations.push({ path: `pipeline[${i}]`, reason: "at most 31 reasons per filter" });
      if (stage.scope === "static") this.staticFilters.push({ filter: stage, base });
      else this.nodeFilters.push({ filter: stage, base });
    });
    if (violations.length > 0) throw invalid("INVALID_CONFIG", violations, "scheduler pipeline");
  }
}

/**
 * Defines a pipeline from one list read top to bottom: filters (static or node scoped)
 * and scorers wrapped by `scoreWith(scorer, weight)`. Every filter runs on every node; the list
 * order is the order statuses are reported in. A scorer with weight 0 is left out.
 */
export function definePipeline(stages: readonly PipelineStage[]): Pipeline {
  return new Pipeline(stages);
}
