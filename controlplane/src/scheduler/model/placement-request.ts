import { invalid } from "@persys/schema";
import { expressionViolations, type LabelExpression, type LabelSelector } from "./label-selector.js";
import { type Resources, resourceViolations } from "./resources.js";
import { type HostPort, hostPortViolations, type WorkloadKind, workloadKinds } from "./scheduler-node.js";

/** A weighted preference for nodes whose labels match every expression. */
export interface PreferredAffinityTerm {
  /** 1..100; a node's preferred-affinity score is the matched share of the total weight. */
  readonly weight: number;
  readonly match: readonly LabelExpression[];
}

/**
 * Spread replicas of the workload over the values of a node label (`zone`, `rack`): the replica
 * count of any two domains may differ by at most `maxSkew`. Domains are the label's values among
 * nodes that pass the static filters (ready, schedulable, runtime, capabilities, selector, affinity).
 */
export interface SpreadConstraint {
  readonly labelKey: string;
  /** At least 1. */
  readonly maxSkew: number;
  /**
   * `do-not-schedule` (default): a node whose placement would exceed maxSkew is filtered out, and
   * a node without the label too. `schedule-anyway`: only scoring prefers the emptier domains.
   */
  readonly whenUnsatisfiable?: "do-not-schedule" | "schedule-anyway";
}

/** How replicas of the same workload avoid each other's nodes. */
export type ReplicaAntiAffinity = "required" | "preferred" | "none";

/** Where a workload may and should go. Every field is optional. */
export interface PlacementRules {
  /** Node labels that must all be present with these values. */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Label expressions on node labels that must all hold. */
  readonly requiredAffinity?: readonly LabelExpression[];
  /** Weighted label preferences, scored. */
  readonly preferredAffinity?: readonly PreferredAffinityTerm[];
  readonly antiAffinity?: {
    /**
     * `preferred` (default) spreads replicas across nodes by scoring; `required` never puts two
     * replicas of the workload on one node; `none` ignores siblings.
     */
    readonly replicas?: ReplicaAntiAffinity;
    /** Never share a node with a replica of another workload whose labels match any selector. */
    readonly workloads?: readonly LabelSelector[];
  };
  readonly spread?: readonly SpreadConstraint[];
  /** Node capabilities that must all be present, e.g. `["kvm"]`. */
  readonly requiredCapabilities?: readonly string[];
  /** Allowed node architectures; empty or absent allows any. */
  readonly arch?: readonly string[];
}

/**
 * What the scheduler is asked to place: `replicas` copies of one workload, each needing `resources`
 * and `hostPorts` on its node. The control plane maps its workload spec onto this shape.
 */
export interface PlacementRequest {
  /** DNS-1123 workload id; replicas are identified by (workloadId, index). */
  readonly workloadId: string;
  readonly kind: WorkloadKind;
  readonly replicas: number;
  /** Per replica. */
  readonly resources: Resources;
  /** Labels of the workload, matched by other workloads' anti-affinity selectors. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Host ports every replica binds. */
  readonly hostPorts?: readonly HostPort[];
  readonly placement?: PlacementRules;
}

const dns1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function selectorViolations(selector: LabelSelector, path: string): { path: string; reason: string }[] {
  const out = expressionViolations(selector?.matchExpressions, `${path}.matchExpressions`);
  const hasLabels = selector?.matchLabels !== undefined && Object.keys(selector.matchLabels).length > 0;
  if (!hasLabels && (selector?.matchExpressions ?? []).length === 0) {
    out.push({ path, reason: "must have matchLabels or matchExpressions (an empty selector would match everything)" });
  }
  return out;
}

function placementViolations(p: PlacementRules | undefined): { path: string; reason: string }[] {
  if (p === undefined) return [];
  const v = [
    ...expressionViolations(p.requiredAffinity, "placement.requiredAffinity"),
    ...(p.antiAffinity?.workloads ?? []).flatMap((s, i) =>
      selectorViolations(s, `placement.antiAffinity.workloads[${i}]`),
    ),
  ];
  (p.preferredAffinity ?? []).forEach((t, i) => {
    if (!Number.isInteger(t?.weight) || t.weight < 1 || t.weight > 100) {
      v.push({ path: `placement.preferredAffinity[${i}].weight`, reason: "must be an integer from 1 to 100" });
    }
    v.push(...expressionViolations(t?.match, `placement.preferredAffinity[${i}].match`));
  });
  const replicas = p.antiAffinity?.replicas;
  if (replicas !== undefined && replicas !== "required" && replicas !== "preferred" && replicas !== "none") {
    v.push({ path: "placement.antiAffinity.replicas", reason: "must be required, preferred or none" });
  }
  (p.spread ?? []).forEach((s, i) => {
    const at = `placement.spread[${i}]`;
    if (typeof s?.labelKey !== "string" || s.labelKey === "") v.push({ path: `${at}.labelKey`, reason: "is required" });
    if (!Number.isInteger(s?.maxSkew) || s.maxSkew < 1) {
      v.push({ path: `${at}.maxSkew`, reason: "must be an integer of at least 1" });
    }
    const when = s?.whenUnsatisfiable;
    if (when !== undefined && when !== "do-not-schedule" && when !== "schedule-anyway") {
      v.push({ path: `${at}.whenUnsatisfiable`, reason: "must be do-not-schedule or schedule-anyway" });
    }
  });
  return v;
}

/**
 * Checks a request; throws INVALID_SPEC naming every bad field, so bad input never reaches the
 * pipeline.
 */
export function validatePlacementRequest(request: PlacementRequest): void {
  const v: { path: string; reason: string }[] = [];
  if (typeof request?.workloadId !== "string" || !dns1123.test(request.workloadId)) {
    v.push({ path: "workloadId", reason: "must be a DNS-1123 name (lower case letters, digits and '-')" });
  }
  if (!workloadKinds.includes(request?.kind)) v.push({ path: "kind", reason: "must be container, compose or vm" });
  if (!Number.isSafeInteger(request?.replicas) || request.replicas < 0) {
    v.push({ path: "replicas", reason: "must be a non-negative integer" });
  }
  v.push(...resourceViolations(request?.resources, "resources"));
  v.push(...hostPortViolations(request?.hostPorts, "hostPorts"));
  v.push(...placementViolations(request?.placement));
  if (v.length > 0) throw invalid("INVALID_SPEC", v, `placement request ${String(request?.workloadId)}`);
}
