import type { StaticFilter } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";

/**
 * Filter: the node is live and ready, not cordoned and not draining. A node can fail all three at
 * once and is counted under each.
 */
export function nodeReady(): StaticFilter {
  return {
    scope: "static",
    name: "node-ready",
    reasons: [Reason.NODE_NOT_READY, Reason.NODE_CORDONED, Reason.NODE_DRAINING],
    cacheKey: () => "",
    check: (cls) => (cls.ready ? 0 : 1) | (cls.cordoned ? 2 : 0) | (cls.draining ? 4 : 0),
  };
}
