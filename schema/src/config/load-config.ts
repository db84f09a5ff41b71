import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { invalid, PersysError } from "../errors/persys-error.js";
import { type ConfigLeaf, configLeaves, parseLeafValue } from "./config-leaves.js";

export interface ConfigSources {
  /** Path of a YAML or JSON file; its keys must all be known. */
  file?: string | undefined;
  /** Environment (defaults to none: pass `process.env` explicitly). */
  env?: Record<string, string | undefined>;
  /** Flag values by flag name without dashes (`state-endpoints`) or by dotted path (`state.endpoints`). */
  flags?: Record<string, string | undefined>;
  /** Prefix of environment variables, `PERSYS` by default. */
  envPrefix?: string;
}

type Origin = { source: string; leaf?: ConfigLeaf };

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1)!] = value;
}

function readFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new PersysError("INVALID_CONFIG", `cannot read config file ${file}: ${(cause as Error).message}`, {
      details: [{ path: "file", reason: `cannot read ${file}` }],
      cause,
    });
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { prettyErrors: true }) ?? {};
  } catch (cause) {
    throw new PersysError("INVALID_CONFIG", `config file ${file} is not valid YAML: ${(cause as Error).message}`, {
      details: [{ path: "file", reason: "not valid YAML/JSON" }],
      cause,
    });
  }
  if (typeof parsed !== "object" || Array.isArray(parsed) || parsed === null) {
    throw invalid("INVALID_CONFIG", [{ path: "file", reason: `${file} must hold a mapping of keys` }], "config");
  }
  return parsed as Record<string, unknown>;
}

const render = (path: PropertyKey[]) =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)),
    "",
  );

/**
 * Loads a typed configuration: schema defaults, then the file, then environment variables, then
 * flags (later wins), validated as a whole. Every problem is reported at once as an `INVALID_CONFIG`
 * error whose details name the key and where its value came from; nothing is returned half-valid.
 */
export function loadConfig<S extends z.ZodType>(schema: S, sources: ConfigSources = {}): z.output<S> {
  const leaves = configLeaves(schema, sources.envPrefix);
  const merged: Record<string, unknown> = sources.file ? readFile(sources.file) : {};
  const origins = new Map<string, Origin>();
  for (const leaf of leaves) {
    const fromEnv = sources.env?.[leaf.env];
    if (fromEnv !== undefined) {
      setPath(merged, leaf.path, parseLeafValue(leaf.kind, fromEnv));
      origins.set(leaf.path, { source: `environment variable ${leaf.env}`, leaf });
    }
    const flagName = leaf.flag.slice(2);
    const fromFlag = sources.flags?.[flagName] ?? sources.flags?.[leaf.path];
    if (fromFlag !== undefined) {
      setPath(merged, leaf.path, parseLeafValue(leaf.kind, fromFlag));
      origins.set(leaf.path, { source: `flag ${leaf.flag}`, leaf });
    }
  }
  const result = schema.safeParse(merged);
  if (result.success) return result.data;
  const details = result.error.issues.flatMap((issue) => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    return keys.map((path) => {
      const dotted = render(path);
      const origin = origins.get(dotted.replace(/\[\d+\]$/, ""));
      const from = origin ? origin.source : sources.file ? `file ${sources.file}` : "defaults";
      const reason = issue.code === "unrecognized_keys" ? "unknown key" : issue.message;
      return { path: dotted, reason: `${reason} (from ${from})` };
    });
  });
  throw invalid("INVALID_CONFIG", details, "config");
}
