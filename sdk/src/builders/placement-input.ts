import { api, type FieldViolation } from "@persys/schema";
import { parseEnum } from "../enums/friendly-enums.js";
import { checkKeys } from "./input-keys.js";

/** A label operator as written in Kubernetes (`In`, `NotIn`, `Exists`, `DoesNotExist`) or kebab-case. */
export type LabelOperatorName =
  | "In"
  | "NotIn"
  | "Exists"
  | "DoesNotExist"
  | "in"
  | "not-in"
  | "exists"
  | "does-not-exist";

/** Whether a rule filters nodes (`required`, the default) or only scores them (`preferred`). */
export type EnforcementName = "required" | "preferred";

/** A test on one node label (or workload label, in a selector). */
export interface LabelExpressionInput {
  readonly key: string;
  readonly operator: LabelOperatorName | api.LabelOperator;
  /** For In and NotIn: at least one. For Exists and DoesNotExist: none. */
  readonly values?: readonly string[] | undefined;
}

/** Selects other workloads by their labels. */
export interface LabelSelectorInput {
  readonly matchLabels?: Readonly<Record<string, string>> | undefined;
  readonly matchExpressions?: readonly LabelExpressionInput[] | undefined;
}

/**
 * Where replicas may and should run, in friendly form. Every field is optional; `required*` rules
 * filter nodes, `preferred*` rules add to their score.
 */
export interface PlacementInput {
  /** The node must carry every one of these labels with exactly this value. */
  readonly nodeSelector?: Readonly<Record<string, string>> | undefined;
  /** Node capabilities every replica needs, e.g. `["kvm"]`. */
  readonly requiredCapabilities?: readonly string[] | undefined;
  /** CPU architecture (`amd64`, `arm64`). */
  readonly arch?: string | undefined;
  readonly requiredNodeAffinity?: readonly LabelExpressionInput[] | undefined;
  /** Nodes matching the expression get `weight` (1..100) added to their score. */
  readonly preferredNodeAffinity?: readonly (LabelExpressionInput & { readonly weight: number })[] | undefined;
  /** Keep this workload's replicas apart; `true` is "never two on one node". */
  readonly replicaAntiAffinity?:
    | boolean
    | {
        readonly enforcement?: EnforcementName | undefined;
        /** Node label whose values are the domains. Default: the node itself. */
        readonly topologyKey?: string | undefined;
        /** Preferred only: 1..100. */
        readonly weight?: number | undefined;
      }
    | undefined;
  /** Keep replicas away from replicas of other workloads. */
  readonly workloadAntiAffinity?:
    | readonly {
        readonly selector: LabelSelectorInput;
        readonly enforcement?: EnforcementName | undefined;
        readonly topologyKey?: string | undefined;
        readonly weight?: number | undefined;
      }[]
    | undefined;
  /** Spread replicas evenly over the values of a node label (e.g. `zone`). */
  readonly spread?:
    | readonly {
        readonly topologyKey: string;
        /** Default 1. */
        readonly maxSkew?: number | undefined;
        readonly enforcement?: EnforcementName | undefined;
      }[]
    | undefined;
}

const placementKeys = [
  "nodeSelector",
  "requiredCapabilities",
  "arch",
  "requiredNodeAffinity",
  "preferredNodeAffinity",
  "replicaAntiAffinity",
  "workloadAntiAffinity",
  "spread",
];

function operatorOf(input: LabelOperatorName | api.LabelOperator): api.LabelOperator {
  if (typeof input === "number") return input;
  return parseEnum(api.LabelOperator, input) ?? api.LabelOperator.LABEL_OPERATOR_UNSPECIFIED;
}

function enforcementOf(input: EnforcementName | undefined): api.Enforcement {
  if (input === undefined) return api.Enforcement.ENFORCEMENT_REQUIRED;
  return parseEnum(api.Enforcement, input) ?? api.Enforcement.ENFORCEMENT_UNSPECIFIED;
}

function expressionOf(input: LabelExpressionInput): api.LabelExpression {
  return { key: input.key, operator: operatorOf(input.operator), values: [...(input.values ?? [])] };
}

/**
 * The API's `Placement` for friendly input. Unknown keys are reported in `violations` (under `path`);
 * an unknown operator or enforcement name becomes UNSPECIFIED, which validation then names.
 */
export function placementOf(input: PlacementInput, path: string, violations: FieldViolation[]): api.Placement {
  checkKeys(input, placementKeys, path, violations);
  const replica = input.replicaAntiAffinity;
  return api.Placement.fromPartial({
    nodeSelector: { ...input.nodeSelector },
    requiredCapabilities: [...(input.requiredCapabilities ?? [])],
    arch: input.arch ?? "",
    requiredNodeAffinity: (input.requiredNodeAffinity ?? []).map(expressionOf),
    preferredNodeAffinity: (input.preferredNodeAffinity ?? []).map((p) => ({
      expression: expressionOf(p),
      weight: p.weight,
    })),
    replicaAntiAffinity:
      replica === undefined || replica === false
        ? undefined
        : replica === true
          ? { enforcement: api.Enforcement.ENFORCEMENT_REQUIRED, topologyKey: "", weight: 0 }
          : {
              enforcement: enforcementOf(replica.enforcement),
              topologyKey: replica.topologyKey ?? "",
              weight: replica.weight ?? 0,
            },
    workloadAntiAffinity: (input.workloadAntiAffinity ?? []).map((rule) => ({
      workloadSelector: {
        matchLabels: { ...rule.selector.matchLabels },
        matchExpressions: (rule.selector.matchExpressions ?? []).map(expressionOf),
      },
      enforcement: enforcementOf(rule.enforcement),
      topologyKey: rule.topologyKey ?? "",
      weight: rule.weight ?? 0,
    })),
    spread: (input.spread ?? []).map((rule) => ({
      topologyKey: rule.topologyKey,
      maxSkew: rule.maxSkew ?? 1,
      enforcement: enforcementOf(rule.enforcement),
    })),
  });
}
