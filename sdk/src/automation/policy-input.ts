import { api, invalid } from "@persys/schema";

const TOP = new Set(["id", "when", "then", "action", "cooldownSeconds", "dryRun", "approval", "updatedAt"]);
const TRIGGERS = new Set(["metric", "cron", "finding", "event"]);
const ACTIONS = new Set(["scale", "restart", "cordon", "drain", "move", "webhook"]);

const short: Record<string, Record<string, string>> = {
  metric: { cpu: "POLICY_METRIC_CPU_PERCENT", memory: "POLICY_METRIC_MEMORY_PERCENT" },
  approval: { auto: "POLICY_APPROVAL_AUTO", manual: "POLICY_APPROVAL_MANUAL" },
  kind: {
    "right-size": "RECOMMENDATION_KIND_RIGHT_SIZE",
    rebalance: "RECOMMENDATION_KIND_REBALANCE",
    flapping: "RECOMMENDATION_KIND_FLAPPING",
    "node-at-risk": "RECOMMENDATION_KIND_NODE_AT_RISK",
  },
};

/**
 * A policy from its YAML/JSON document: the proto3 JSON form of `persys.api.v1.Policy`, plus short
 * enum names (`metric: cpu`, `approval: manual`, `finding: {kind: rebalance}`).
 *
 * ```yaml
 * id: web-autoscale
 * when: { metric: { workloadId: web, metric: cpu, threshold: 80, windowSeconds: 60 } }
 * then: { scale: { workloadId: web, step: 2, minReplicas: 2, maxReplicas: 8 } }
 * cooldownSeconds: 300
 * ```
 *
 * @throws PersysError INVALID_ARGUMENT naming unknown keys and a `when`/`then` without exactly one entry.
 */
export function policyFromDocument(document: unknown): api.Policy {
  if (!document || typeof document !== "object" || Array.isArray(document)) {
    throw invalid("INVALID_ARGUMENT", [{ path: "policy", reason: "must be a mapping" }]);
  }
  type Entry = Record<string, Record<string, unknown> | undefined>;
  const doc = structuredClone(document) as Record<string, unknown> & { when?: Entry; action?: Entry; then?: Entry };
  const violations: { path: string; reason: string }[] = [];
  // `then:` reads best in documents; on the wire the field is `action` (no `then` property in JS objects).
  if ("then" in doc) {
    if ("action" in doc) violations.push({ path: "then", reason: "give either then or action, not both" });
    doc.action = doc.then;
    delete doc.then;
  }
  for (const key of Object.keys(doc))
    if (!TOP.has(key)) violations.push({ path: key, reason: "is not a policy field" });
  for (const [field, allowed] of [
    ["when", TRIGGERS],
    ["action", ACTIONS],
  ] as const) {
    const keys = Object.keys((doc[field] as object | undefined) ?? {});
    if (keys.length !== 1 || !allowed.has(keys[0]!)) {
      violations.push({ path: field, reason: `needs exactly one of ${[...allowed].join(", ")}` });
    }
  }
  if (violations.length > 0) throw invalid("INVALID_ARGUMENT", violations);
  const expand = (target: Record<string, unknown> | undefined, key: string) => {
    const value = target?.[key];
    if (target && typeof value === "string") target[key] = short[key]![value] ?? value;
  };
  expand(doc, "approval");
  expand(doc.when?.metric, "metric");
  expand(doc.when?.finding, "kind");
  return api.Policy.fromJSON(doc);
}
