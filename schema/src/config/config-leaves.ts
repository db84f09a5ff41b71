import type { z } from "zod";

/** The scalar kinds a configuration leaf can have; env and flag strings are parsed by kind. */
export type LeafKind = "string" | "number" | "boolean" | "string[]" | "number[]";

export interface ConfigLeaf {
  /** Dotted path in the config object, e.g. `state.endpoints`. */
  readonly path: string;
  readonly kind: LeafKind;
  /** Environment variable that sets it, e.g. `PERSYS_STATE_ENDPOINTS`. */
  readonly env: string;
  /** Command-line flag that sets it, e.g. `--state-endpoints`. */
  readonly flag: string;
}

type Def = { type: string; innerType?: z.ZodType; shape?: Record<string, z.ZodType>; element?: z.ZodType };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (!def.innerType || !["default", "optional", "nullable", "prefault", "readonly", "catch"].includes(def.type)) {
      return current;
    }
    current = def.innerType;
  }
}

const snake = (segment: string) => segment.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
const kebab = (segment: string) => segment.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();

function kindOf(schema: z.ZodType): LeafKind | undefined {
  const def = defOf(schema);
  switch (def.type) {
    case "string":
    case "enum":
    case "literal":
      return "string";
    case "number":
    case "int":
      return "number";
    case "boolean":
      return "boolean";
    case "array": {
      const element = def.element ? kindOf(unwrap(def.element)) : undefined;
      return element === "number" ? "number[]" : element === "string" ? "string[]" : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Lists the settable leaves of an object schema with their environment variable and flag names,
 * derived from the path: `node.leaseTtlSeconds` ↔ `PERSYS_NODE_LEASE_TTL_SECONDS` ↔
 * `--node-lease-ttl-seconds`. Leaves of other kinds (records, unions) are settable from files only.
 */
export function configLeaves(schema: z.ZodType, envPrefix = "PERSYS"): ConfigLeaf[] {
  const leaves: ConfigLeaf[] = [];
  const walk = (node: z.ZodType, path: string[]) => {
    const inner = unwrap(node);
    const def = defOf(inner);
    if (def.type === "object" && def.shape) {
      for (const [key, child] of Object.entries(def.shape)) walk(child, [...path, key]);
      return;
    }
    const kind = kindOf(inner);
    if (!kind || path.length === 0) return;
    leaves.push({
      path: path.join("."),
      kind,
      env: [envPrefix, ...path.map(snake)].join("_"),
      flag: `--${path.map(kebab).join("-")}`,
    });
  };
  walk(schema, []);
  return leaves;
}

/** Parses a string from an environment variable or flag into the leaf's kind (validation comes later). */
export function parseLeafValue(kind: LeafKind, raw: string): unknown {
  const list = () =>
    raw
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "");
  switch (kind) {
    case "string":
      return raw;
    case "number":
      return raw.trim() === "" ? Number.NaN : Number(raw);
    case "boolean":
      return /^(1|true|yes|on)$/i.test(raw) ? true : /^(0|false|no|off)$/i.test(raw) ? false : raw;
    case "string[]":
      return list();
    case "number[]":
      return list().map(Number);
  }
}
