import type { FieldViolation } from "@persys/schema";

/** The parts of an Ajv error this module reads (Fastify hands them over as `error.validation`). */
export interface SchemaValidationIssue {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params: Record<string, unknown>;
  readonly message?: string;
  readonly parentSchema?: unknown;
}

/**
 * Field violations of JSON Schema validation failures, with paths in the API's style:
 * `prefix.container.ports[0].hostPort` (array indexes in brackets, object keys and map keys dotted).
 * `data` is the validated value, used to tell array indexes from map keys that look like numbers.
 * `unknownReason` is the reason given for a key the schema does not know.
 */
export function violationsOf(
  issues: readonly SchemaValidationIssue[],
  data: unknown,
  prefix = "",
  unknownReason = "unknown field",
): FieldViolation[] {
  return issues.map((issue) => {
    const segments = pointerSegments(issue.instancePath);
    const base = formatPath(prefix, segments, data);
    const child = (name: string) => (base ? `${base}.${name}` : name);
    switch (issue.keyword) {
      case "additionalProperties":
        return { path: child(String(issue.params.additionalProperty)), reason: unknownReason };
      case "required":
        return { path: child(String(issue.params.missingProperty)), reason: "is required" };
      case "not":
        return oneofConflict(issue, child) ?? { path: base || "(root)", reason: issue.message ?? "is invalid" };
      default:
        return { path: base || "(root)", reason: reasonOf(issue) };
    }
  });
}

function reasonOf(issue: SchemaValidationIssue): string {
  const p = issue.params;
  switch (issue.keyword) {
    case "type":
      return `must be ${article(String(p.type).replace(",", " or "))}`;
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).join(", ")}`;
    case "format":
      return p.format === "date-time"
        ? "must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z"
        : `must be a valid ${String(p.format)}`;
    case "pattern":
      return /\[0-9\]/.test(String(p.pattern)) ? "must be an integer (a number or a decimal string)" : "is malformed";
    case "minLength":
      return p.limit === 1 ? "must not be empty" : `must be at least ${String(p.limit)} characters`;
    default:
      return issue.message ?? "is invalid";
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** `{not: {required: [a, b]}}` titled "oneof group": name the second member and what it clashes with. */
function oneofConflict(issue: SchemaValidationIssue, child: (name: string) => string): FieldViolation | undefined {
  const parent = issue.parentSchema as { title?: unknown; not?: { required?: unknown } } | undefined;
  const title = typeof parent?.title === "string" ? parent.title : "";
  const members = parent?.not?.required;
  if (!title.startsWith("oneof ") || !Array.isArray(members) || members.length !== 2) return undefined;
  const [first, second] = members as [string, string];
  return {
    path: child(second),
    reason: `cannot be set together with ${first}: at most one member of the oneof "${title.slice(6)}" may be set`,
  };
}

function pointerSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function formatPath(prefix: string, segments: readonly string[], data: unknown): string {
  let path = prefix;
  let node: unknown = data;
  for (const segment of segments) {
    if (Array.isArray(node)) {
      path = `${path}[${segment}]`;
      node = node[Number(segment)];
    } else {
      path = path ? `${path}.${segment}` : segment;
      node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
    }
  }
  return path;
}
