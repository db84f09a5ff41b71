import {
  Enforcement,
  type LabelExpression,
  LabelOperator,
  type LabelSelector,
  type Placement,
} from "../gen/persys/api/v1/placement.js";
import { checkLabels, labelKeyProblem, labelValueProblem, type Violations } from "./violations.js";

function checkExpression(v: Violations, expression: LabelExpression | undefined): void {
  if (!expression) {
    v.add("is required");
    return;
  }
  const keyProblem = labelKeyProblem(expression.key);
  if (keyProblem) v.add(keyProblem, "key");
  switch (expression.operator) {
    case LabelOperator.LABEL_OPERATOR_IN:
    case LabelOperator.LABEL_OPERATOR_NOT_IN:
      if (expression.values.length === 0) v.add("In and NotIn need at least one value", "values");
      expression.values.forEach((value, i) => {
        const problem = labelValueProblem(value);
        if (problem) v.at("values").add(problem, i);
      });
      break;
    case LabelOperator.LABEL_OPERATOR_EXISTS:
    case LabelOperator.LABEL_OPERATOR_DOES_NOT_EXIST:
      if (expression.values.length > 0) v.add("Exists and DoesNotExist take no values", "values");
      break;
    default:
      v.add("must be one of In, NotIn, Exists, DoesNotExist", "operator");
  }
}

function checkSelector(v: Violations, selector: LabelSelector | undefined): void {
  if (!selector) {
    v.add("is required");
    return;
  }
  checkLabels(v, selector.matchLabels, "matchLabels");
  selector.matchExpressions.forEach((e, i) => {
    checkExpression(v.at("matchExpressions").at(i), e);
  });
  if (Object.keys(selector.matchLabels).length === 0 && selector.matchExpressions.length === 0) {
    v.add("must match on at least one label");
  }
}

function checkTopologyKey(v: Violations, key: string, required: boolean): void {
  if (!key) {
    if (required) v.add("is required", "topologyKey");
    return;
  }
  const problem = labelKeyProblem(key);
  if (problem) v.add(problem, "topologyKey");
}

function checkWeight(v: Violations, weight: number, enforcement: Enforcement): void {
  if (enforcement === Enforcement.ENFORCEMENT_PREFERRED && weight !== 0 && (weight < 1 || weight > 100)) {
    v.add("must be in 1..100", "weight");
  }
}

/** Checks placement rules: selectors, affinity expressions, anti-affinity, spread, capabilities. */
export function validatePlacement(v: Violations, placement: Placement): void {
  checkLabels(v, placement.nodeSelector, "nodeSelector");
  placement.requiredNodeAffinity.forEach((e, i) => {
    checkExpression(v.at("requiredNodeAffinity").at(i), e);
  });
  placement.preferredNodeAffinity.forEach((p, i) => {
    const item = v.at("preferredNodeAffinity").at(i);
    checkExpression(item.at("expression"), p.expression);
    if (p.weight < 1 || p.weight > 100) item.add("must be in 1..100", "weight");
  });
  const replica = placement.replicaAntiAffinity;
  if (replica) {
    checkTopologyKey(v.at("replicaAntiAffinity"), replica.topologyKey, false);
    checkWeight(v.at("replicaAntiAffinity"), replica.weight, replica.enforcement);
  }
  placement.workloadAntiAffinity.forEach((rule, i) => {
    const item = v.at("workloadAntiAffinity").at(i);
    checkSelector(item.at("workloadSelector"), rule.workloadSelector);
    checkTopologyKey(item, rule.topologyKey, false);
    checkWeight(item, rule.weight, rule.enforcement);
  });
  placement.spread.forEach((rule, i) => {
    const item = v.at("spread").at(i);
    checkTopologyKey(item, rule.topologyKey, true);
    if (rule.maxSkew < 0) item.add("must be >= 1 (0 means 1)", "maxSkew");
  });
  placement.requiredCapabilities.forEach((capability, i) => {
    if (!/^[a-z0-9][-a-z0-9.]*$/.test(capability)) {
      v.at("requiredCapabilities").add(`capability "${capability}" must be lowercase, e.g. kvm`, i);
    }
  });
  if (placement.arch && !/^[a-z0-9_]+$/.test(placement.arch)) v.add("must be an architecture such as amd64", "arch");
}
