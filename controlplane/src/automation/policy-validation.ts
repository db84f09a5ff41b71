import { api, type FieldViolation, invalid } from "@persys/schema";
import { parseCron } from "./cron-schedule.js";

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Defaults applied to a stored policy. */
export const POLICY_DEFAULTS = { cooldownSeconds: 300, windowSeconds: 60 } as const;

/**
 * Checks a policy and names every bad field (`policy.when.metric.threshold`, ...).
 *
 * @throws PersysError INVALID_ARGUMENT with one detail per violation.
 */
export function validatePolicy(policy: api.Policy | undefined): api.Policy {
  const v: FieldViolation[] = [];
  const bad = (path: string, reason: string) => v.push({ path: `policy.${path}`, reason });
  if (!policy) throw invalid("INVALID_ARGUMENT", [{ path: "policy", reason: "is required" }]);
  if (!NAME.test(policy.id)) bad("id", "must be a DNS-1123 name (lower-case letters, digits, '-')");
  if (policy.cooldownSeconds < 0 || policy.cooldownSeconds > 7 * 86_400) bad("cooldownSeconds", "must be 0..604800");
  const trigger = policy.when?.trigger;
  if (!trigger) bad("when", "needs one of metric, cron, finding, event");
  else if (trigger.$case === "metric") {
    const m = trigger.value;
    if (!m.workloadId === !m.nodeId) bad("when.metric", "needs exactly one of workloadId and nodeId");
    if (m.metric === api.PolicyMetric.POLICY_METRIC_UNSPECIFIED) bad("when.metric.metric", "is required");
    if (!Number.isFinite(m.threshold) || m.threshold < 0) bad("when.metric.threshold", "must be a percentage ≥ 0");
    if (m.windowSeconds < 0 || m.windowSeconds > 86_400) bad("when.metric.windowSeconds", "must be 0..86400");
  } else if (trigger.$case === "cron") {
    try {
      parseCron(trigger.value);
    } catch (error) {
      bad("when.cron", (error as Error).message);
    }
  } else if (trigger.$case === "finding") {
    if (trigger.value.kind === api.RecommendationKind.RECOMMENDATION_KIND_UNSPECIFIED)
      bad("when.finding.kind", "is required");
  } else if (trigger.$case === "event") {
    if (!trigger.value.type) bad("when.event.type", "is required");
    try {
      new RegExp(trigger.value.messagePattern);
    } catch {
      bad("when.event.messagePattern", "is not a regular expression");
    }
    if (trigger.value.count < 0) bad("when.event.count", "must be ≥ 0");
  }
  const action = policy.action?.kind;
  if (!action) bad("action", "needs one of scale, restart, cordon, drain, move, webhook");
  else if (action.$case === "scale") {
    const s = action.value;
    if (!s.workloadId) bad("action.scale.workloadId", "is required");
    if (s.minReplicas < 0) bad("action.scale.minReplicas", "must be ≥ 0");
    if (s.maxReplicas < Math.max(1, s.minReplicas)) bad("action.scale.maxReplicas", "must be ≥ minReplicas and ≥ 1");
  } else if (action.$case === "restart") {
    if (!action.value.workloadId) bad("action.restart.workloadId", "is required");
  } else if (action.$case === "cordon" || action.$case === "drain") {
    const fromTrigger =
      trigger?.$case === "metric" ? trigger.value.nodeId : trigger?.$case === "finding" ? "finding" : "";
    if (!action.value.nodeId && !fromTrigger)
      bad(`action.${action.$case}.nodeId`, "is required unless the trigger names a node");
  } else if (action.$case === "move") {
    if (!action.value.workloadId && trigger?.$case !== "finding")
      bad("action.move.workloadId", "is required unless the trigger is a finding");
  } else if (action.$case === "webhook") {
    const w = action.value;
    if (!/^https?:\/\//.test(w.url) || !URL.canParse(w.url)) bad("action.webhook.url", "must be an http(s) URL");
    if (w.maxAttempts < 0 || w.maxAttempts > 10) bad("action.webhook.maxAttempts", "must be 0..10 (0 means 4)");
    if (w.timeoutSeconds < 0 || w.timeoutSeconds > 60)
      bad("action.webhook.timeoutSeconds", "must be 0..60 (0 means 10)");
  }
  if (v.length > 0) throw invalid("INVALID_ARGUMENT", v);
  return policy;
}
