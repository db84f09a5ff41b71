import { type CompiledExpression, compileExpressions, toLabelMap } from "../model/label-selector.js";
import {
  type PlacementRequest,
  type ReplicaAntiAffinity,
  type SpreadConstraint,
  validatePlacementRequest,
} from "../model/placement-request.js";
import type { Resources } from "../model/resources.js";
import { hostPortKey, type WorkloadKind } from "../model/scheduler-node.js";
import { compileTraits, type WorkloadTraits } from "../snapshot/workload-index.js";

/** A spread constraint with its default filled in. */
export interface CompiledSpread {
  readonly labelKey: string;
  readonly maxSkew: number;
  readonly hard: boolean;
}

/** A preferred-affinity term in compiled form. */
export interface CompiledPreference {
  readonly weight: number;
  readonly match: readonly CompiledExpression[];
}

/**
 * A validated request with defaults filled in and selectors compiled, made once per request and
 * shared by the decisions of all its replicas.
 */
export interface CompiledRequest {
  readonly source: PlacementRequest;
  readonly workloadId: string;
  readonly kind: WorkloadKind;
  readonly replicas: number;
  readonly resources: Resources;
  /** `nodeSelector` as `In` expressions. */
  readonly nodeSelector: readonly CompiledExpression[];
  readonly requiredAffinity: readonly CompiledExpression[];
  readonly preferred: readonly CompiledPreference[];
  readonly replicaAntiAffinity: ReplicaAntiAffinity;
  readonly spread: readonly CompiledSpread[];
  /** Sorted, deduplicated. */
  readonly requiredCapabilities: readonly string[];
  /** Allowed architectures; empty allows any. */
  readonly arch: ReadonlySet<string>;
  /** Host port keys, deduplicated, ascending. */
  readonly portKeys: readonly number[];
  /** Labels and anti-affinity selectors, as recorded with each reservation. */
  readonly traits: WorkloadTraits;
  /** 32-bit hash of the workload id (seeds the sampling offset). */
  readonly idHash: number;
  /**
   * Set only to move a placed replica (see the `replica-move` filter): the nodes it leaves, and
   * the one node it must go to, if any. Derived per move from the workload's compiled request.
   */
  readonly move?: { readonly leaving: readonly string[]; readonly target?: string };
}

/** FNV-1a over a string, 32 bits. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function compileSpread(s: SpreadConstraint): CompiledSpread {
  return {
    labelKey: s.labelKey,
    maxSkew: s.maxSkew,
    hard: (s.whenUnsatisfiable ?? "do-not-schedule") === "do-not-schedule",
  };
}

/** Validates (throws INVALID_SPEC) and compiles a request. */
export function compileRequest(request: PlacementRequest): CompiledRequest {
  validatePlacementRequest(request);
  const p = request.placement ?? {};
  const selector = [...toLabelMap(p.nodeSelector)].map(
    ([key, value]): CompiledExpression => ({ key, operator: "In", values: new Set([value]) }),
  );
  return {
    source: request,
    workloadId: request.workloadId,
    kind: request.kind,
    replicas: request.replicas,
    resources: request.resources,
    nodeSelector: selector,
    requiredAffinity: compileExpressions(p.requiredAffinity),
    preferred: (p.preferredAffinity ?? []).map((t) => ({ weight: t.weight, match: compileExpressions(t.match) })),
    replicaAntiAffinity: p.antiAffinity?.replicas ?? "preferred",
    spread: (p.spread ?? []).map(compileSpread),
    requiredCapabilities: [...new Set(p.requiredCapabilities ?? [])].sort(),
    arch: new Set(p.arch ?? []),
    portKeys: [...new Set((request.hostPorts ?? []).map(hostPortKey))].sort((a, b) => a - b),
    traits: compileTraits(request.labels, p.antiAffinity?.workloads),
    idHash: fnv1a(request.workloadId),
  };
}
