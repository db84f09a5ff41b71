import type { StaticFilter } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";

/**
 * Filter: the node serves the workload's runtime (`container`, `compose`, `vm`), has every
 * required capability (e.g. `kvm`) and, when the request lists architectures, one of them.
 */
export function runtimeAndCapabilities(): StaticFilter {
  return {
    scope: "static",
    name: "runtime-capability",
    reasons: [Reason.RUNTIME_MISSING, Reason.CAPABILITY_MISSING, Reason.ARCH_MISMATCH],
    cacheKey: (req) => `${req.kind}|${req.requiredCapabilities.join(",")}|${[...req.arch].sort().join(",")}`,
    check(cls, req) {
      let mask = cls.runtimes.has(req.kind) ? 0 : 1;
      for (const cap of req.requiredCapabilities) {
        if (!cls.capabilities.has(cap)) {
          mask |= 2;
          break;
        }
      }
      if (req.arch.size > 0 && !req.arch.has(cls.arch)) mask |= 4;
      return mask;
    },
    subject(req, reason) {
      if (reason === 0) return req.kind;
      if (reason === 1) {
        const caps = req.requiredCapabilities;
        return caps.length === 1 ? caps[0] : `(needs all of ${caps.join(", ")})`;
      }
      return [...req.arch].sort().join(" or ");
    },
  };
}
