/**
 * Label expressions (Kubernetes' `In`/`NotIn`/`Exists`/`DoesNotExist`) and their compiled form.
 * A list of expressions matches when every expression matches (AND); use `In` with several values
 * for an OR over values of one key.
 */

/** Operators of a label expression. */
export type LabelOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

/** One condition on a label: `zone In [a, b]`, `gpu Exists`. */
export interface LabelExpression {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Required (non-empty) for `In`/`NotIn`, forbidden for `Exists`/`DoesNotExist`. */
  readonly values?: readonly string[];
}

/** Selects workloads by their labels: every `matchLabels` pair and every expression must hold. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelExpression[];
}

/** A label expression ready to evaluate against a label map. */
export interface CompiledExpression {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: ReadonlySet<string>;
}

/** Labels as a map, so keys such as `constructor` never hit the object prototype. */
export type LabelMap = ReadonlyMap<string, string>;

const operators: ReadonlySet<string> = new Set(["In", "NotIn", "Exists", "DoesNotExist"]);

/** Turns a label record into a map (own enumerable keys only). */
export function toLabelMap(labels: Readonly<Record<string, string>> | undefined): Map<string, string> {
  const map = new Map<string, string>();
  if (labels) for (const key of Object.keys(labels)) map.set(key, String(labels[key]));
  return map;
}

/** Field violations of an expression list at `path`. */
export function expressionViolations(
  expressions: readonly LabelExpression[] | undefined,
  path: string,
): { path: string; reason: string }[] {
  if (expressions === undefined) return [];
  if (!Array.isArray(expressions)) return [{ path, reason: "must be a list of label expressions" }];
  const out: { path: string; reason: string }[] = [];
  expressions.forEach((e, i) => {
    const at = `${path}[${i}]`;
    if (typeof e?.key !== "string" || e.key === "") out.push({ path: `${at}.key`, reason: "is required" });
    if (!operators.has(e?.operator)) {
      out.push({ path: `${at}.operator`, reason: "must be one of In, NotIn, Exists, DoesNotExist" });
      return;
    }
    const hasValues = Array.isArray(e.values) && e.values.length > 0;
    if ((e.operator === "In" || e.operator === "NotIn") && !hasValues) {
      out.push({ path: `${at}.values`, reason: `must list at least one value for ${e.operator}` });
    }
    if ((e.operator === "Exists" || e.operator === "DoesNotExist") && hasValues) {
      out.push({ path: `${at}.values`, reason: `must be empty for ${e.operator}` });
    }
  });
  return out;
}

/** Compiles an expression list; call after validating it. */
export function compileExpressions(expressions: readonly LabelExpression[] | undefined): CompiledExpression[] {
  return (expressions ?? []).map((e) => ({ key: e.key, operator: e.operator, values: new Set(e.values ?? []) }));
}

/** Compiles a selector into one AND-list: `matchLabels` pairs become `In` expressions. */
export function compileSelector(selector: LabelSelector): CompiledExpression[] {
  const out: CompiledExpression[] = [];
  for (const [key, value] of toLabelMap(selector.matchLabels)) {
    out.push({ key, operator: "In", values: new Set([value]) });
  }
  out.push(...compileExpressions(selector.matchExpressions));
  return out;
}

/** Whether one expression holds for `labels`. */
export function matchesExpression(e: CompiledExpression, labels: LabelMap): boolean {
  const value = labels.get(e.key);
  switch (e.operator) {
    case "In":
      return value !== undefined && e.values.has(value);
    case "NotIn":
      return value === undefined || !e.values.has(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
  }
}

/** Whether every expression holds (an empty list matches everything). */
export function matchesAll(expressions: readonly CompiledExpression[], labels: LabelMap): boolean {
  for (const e of expressions) if (!matchesExpression(e, labels)) return false;
  return true;
}

/** A canonical text of an expression list, equal for equal meaning regardless of order. */
export function expressionsKey(expressions: readonly CompiledExpression[]): string {
  return expressions
    .map((e) => `${e.key}\u0001${e.operator}\u0001${[...e.values].sort().join("\u0002")}`)
    .sort()
    .join("\u0003");
}

/**
 * The label key an index can start from: the key of the first `In` or `Exists` expression (a
 * workload must carry that key to match), or undefined when the selector has none.
 */
export function seedKey(expressions: readonly CompiledExpression[]): string | undefined {
  for (const e of expressions) if (e.operator === "In" || e.operator === "Exists") return e.key;
  return undefined;
}
