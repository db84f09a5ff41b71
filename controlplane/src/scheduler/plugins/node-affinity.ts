import type { StaticFilter } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { expressionsKey, matchesAll } from "../model/label-selector.js";

/**
 * Filter: the node's labels carry every `nodeSelector` pair and satisfy every required affinity
 * expression. Selector and affinity are counted as separate reasons.
 */
export function nodeAffinity(): StaticFilter {
  return {
    scope: "static",
    name: "node-affinity",
    reasons: [Reason.NODE_SELECTOR_MISMATCH, Reason.NODE_AFFINITY_MISMATCH],
    cacheKey: (req) => `${expressionsKey(req.nodeSelector)}|${expressionsKey(req.requiredAffinity)}`,
    check: (cls, req) =>
      (matchesAll(req.nodeSelector, cls.labels) ? 0 : 1) | (matchesAll(req.requiredAffinity, cls.labels) ? 0 : 2),
  };
}
