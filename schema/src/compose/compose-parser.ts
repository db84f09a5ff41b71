import { parseDocument } from "yaml";
import { type FieldViolation, invalid, type PersysError } from "../errors/persys-error.js";
import { networkKeys, topLevelKeys, volumeKeys } from "./compose-keys.js";
import type { ComposeNetwork, ComposeProject, ComposeService, ComposeVolume } from "./compose-model.js";
import { ComposeReader, type Raw } from "./compose-reader.js";
import { readService } from "./compose-service.js";
import { show } from "./compose-values.js";
import { parseDotenv } from "./dotenv.js";
import { InterpolationError, interpolate } from "./interpolation.js";

/** A Compose file and what it is read with. */
export interface ComposeSource {
  /** The file's name in messages: `compose.yaml`, or `inline` for a workload's inline YAML. */
  readonly file: string;
  readonly content: string;
  /**
   * Interpolation variables: the workload's `compose.env`. They win over the project's `.env` file;
   * the process environment of the control plane or agent is never used, so a file means the same
   * everywhere.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Active profiles: services with `profiles:` run only when one of theirs is active. */
  readonly profiles?: readonly string[];
  /** Absolute directory of the file (git checkouts): relative bind mounts resolve against it. */
  readonly projectDir?: string;
  /** Reads a file relative to the file's directory (`.env`, `env_file`); undefined when absent. */
  readonly readFile?: (path: string) => string | undefined;
}

/** The parse outcome: a project, or every problem found (paths inside the file). */
export type ComposeParseResult =
  | { readonly ok: true; readonly project: ComposeProject }
  | { readonly ok: false; readonly violations: readonly FieldViolation[] };

const serviceName = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

/**
 * Parses and validates a Compose file: YAML 1.2 with anchors, aliases and `<<` merge keys;
 * interpolation of every string value; `.env` and `env_file`; profiles; then the whole project is
 * checked (unknown services or cycles in `depends_on`, undefined networks and volumes, ports,
 * published-port clashes) and services are put in dependency order. Pure apart from `readFile`.
 *
 * Keys follow the unsupported-key rule of `compose-keys.ts`: ignored keys become warnings on the
 * project, anything else unknown is a violation.
 */
export function readCompose(source: ComposeSource): ComposeParseResult {
  const r = new ComposeReader(source.file);
  const doc = parseDocument(source.content, { merge: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      violations: doc.errors.map((e) => ({
        path: "(yaml)",
        reason: `line ${e.linePos?.[0]?.line ?? "?"}: ${e.message.split("\n")[0]}`,
      })),
    };
  }
  let tree: unknown;
  try {
    tree = doc.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    return { ok: false, violations: [{ path: "(yaml)", reason: (error as Error).message }] };
  }
  const dotenv = readDotenv(source, r);
  const env = { ...dotenv, ...(source.env ?? {}) };
  tree = interpolateTree(tree, env, "", r);
  const top = r.map(tree, "(root)");
  if (!top) return { ok: false, violations: r.violations };
  r.keys(top, topLevelKeys, "");
  const rawServices = r.map(top.services, "services") ?? {};

  const profiles = new Set(source.profiles ?? []);
  const all: ComposeService[] = [];
  const disabled: string[] = [];
  for (const [name, value] of Object.entries(rawServices)) {
    if (!serviceName.test(name)) r.fail(`services.${name}`, "service name must be letters, digits, '.', '_' and '-'");
    const raw = r.map(value, `services.${name}`);
    if (!raw) continue;
    const own = r.strings(raw.profiles, `services.${name}.profiles`);
    if (own.length > 0 && !own.some((p) => profiles.has(p))) {
      disabled.push(name);
      continue;
    }
    all.push(readService(name, raw, { reader: r, env, projectDir: source.projectDir, readFile: source.readFile }));
  }
  const networks = readNetworks(top.networks, r);
  const volumes = readVolumes(top.volumes, r);
  checkReferences(all, disabled, networks, volumes, r);
  const ordered = dependencyOrder(all, r);
  if (r.violations.length > 0) return { ok: false, violations: r.violations };
  const used = new Set(all.flatMap((s) => Object.keys(s.networks)));
  const project: ComposeProject = {
    ...(typeof top.name === "string" && top.name ? { name: top.name } : {}),
    services: ordered,
    disabledServices: disabled,
    networks: networks.filter((n) => used.has(n.key)),
    volumes,
    warnings: r.warnings,
  };
  return { ok: true, project };
}

/** `readCompose`, throwing INVALID_SPEC (details prefixed with `pathPrefix`) when the file is bad. */
export function parseCompose(source: ComposeSource, pathPrefix = ""): ComposeProject {
  const result = readCompose(source);
  if (result.ok) return result.project;
  throw composeError(source.file, result.violations, pathPrefix);
}

/** The INVALID_SPEC error for a bad compose file, naming the file in its message. */
export function composeError(file: string, violations: readonly FieldViolation[], pathPrefix = ""): PersysError {
  const details = violations.map((v) => ({ path: pathPrefix ? `${pathPrefix}.${v.path}` : v.path, reason: v.reason }));
  const error = invalid("INVALID_SPEC", details, `compose file ${file}`);
  return error;
}

function readDotenv(source: ComposeSource, r: ComposeReader): Record<string, string> {
  const text = source.readFile?.(".env");
  if (text === undefined) return {};
  const parsed = parseDotenv(text, (k) => source.env?.[k]);
  if ("line" in parsed) {
    r.fail(".env", `line ${parsed.line}: ${parsed.reason}`);
    return {};
  }
  return parsed.env;
}

function interpolateTree(value: unknown, env: Record<string, string>, path: string, r: ComposeReader): unknown {
  if (typeof value === "string") {
    try {
      return interpolate(value, env);
    } catch (error) {
      if (!(error instanceof InterpolationError)) throw error;
      r.fail(path || "(root)", error.message);
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateTree(v, env, `${path}[${i}]`, r));
  if (value && typeof value === "object") {
    const out: Raw = {};
    for (const [k, v] of Object.entries(value)) {
      // Extension fields are templates for anchors; their own values are interpolated where used.
      out[k] = k.startsWith("x-") && !path ? v : interpolateTree(v, env, path ? `${path}.${k}` : k, r);
    }
    return out;
  }
  return value;
}

function readNetworks(value: unknown, r: ComposeReader): ComposeNetwork[] {
  const out: ComposeNetwork[] = [];
  const m = r.map(value, "networks") ?? {};
  const entries = Object.entries(m);
  if (!("default" in m)) entries.unshift(["default", null]);
  for (const [key, spec] of entries) {
    const at = `networks.${key}`;
    const n = r.map(spec, at) ?? {};
    r.keys(n, networkKeys, at);
    const external = r.boolean(n.external, `${at}.external`);
    const driver = r.string(n.driver, `${at}.driver`, "bridge");
    if (!external && driver !== "bridge")
      r.fail(`${at}.driver`, `must be bridge (a stack runs on one node), got ${show(driver)}`);
    const name = r.string(n.name, `${at}.name`);
    out.push({
      key,
      external,
      ...(name || external ? { name: name || key } : {}),
      driver,
      internal: r.boolean(n.internal, `${at}.internal`),
      labels: r.dict(n.labels, `${at}.labels`),
    });
  }
  return out;
}

function readVolumes(value: unknown, r: ComposeReader): ComposeVolume[] {
  const out: ComposeVolume[] = [];
  for (const [key, spec] of Object.entries(r.map(value, "volumes") ?? {})) {
    const at = `volumes.${key}`;
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(key)) r.fail(at, "volume name must be letters, digits, '_', '.' and '-'");
    const v = r.map(spec, at) ?? {};
    r.keys(v, volumeKeys, at);
    const external = r.boolean(v.external, `${at}.external`);
    const name = r.string(v.name, `${at}.name`);
    out.push({
      key,
      external,
      ...(name || external ? { name: name || key } : {}),
      driver: r.string(v.driver, `${at}.driver`, "local"),
      driverOpts: r.dict(v.driver_opts, `${at}.driver_opts`),
      labels: r.dict(v.labels, `${at}.labels`),
    });
  }
  return out;
}

function checkReferences(
  services: readonly ComposeService[],
  disabled: readonly string[],
  networks: readonly ComposeNetwork[],
  volumes: readonly ComposeVolume[],
  r: ComposeReader,
): void {
  const names = new Set(services.map((s) => s.name));
  const off = new Set(disabled);
  const networkKeys = new Set(networks.map((n) => n.key));
  const volumeKeys = new Set(volumes.map((v) => v.key));
  const published = new Map<string, string>();
  for (const s of services) {
    const at = `services.${s.name}`;
    for (const [dep, d] of Object.entries(s.dependsOn)) {
      if (names.has(dep)) continue;
      if (!d.required) continue;
      r.fail(
        `${at}.depends_on.${dep}`,
        off.has(dep)
          ? `service "${dep}" is not enabled by the active profiles`
          : `depends on undefined service "${dep}"`,
      );
    }
    for (const n of Object.keys(s.networks)) {
      if (!networkKeys.has(n)) r.fail(`${at}.networks.${n}`, `refers to undefined network "${n}"`);
    }
    s.volumes.forEach((m, i) => {
      if (m.type === "volume" && m.source && !volumeKeys.has(m.source)) {
        r.fail(
          `${at}.volumes[${i}]`,
          `refers to undefined volume "${m.source}" (declare it under the top-level volumes)`,
        );
      }
    });
    s.ports.forEach((p, i) => {
      if (p.published === 0) return;
      const key = `${p.hostIp || "0.0.0.0"}:${p.published}/${p.protocol}`;
      const first = published.get(key);
      if (first) r.fail(`${at}.ports[${i}]`, `host port ${key} is already published by ${first}`);
      else published.set(key, `services.${s.name}.ports[${i}]`);
      if (s.replicas > 1) {
        r.fail(
          `${at}.ports[${i}]`,
          `host port ${p.published} cannot be published by ${s.replicas} replicas; omit the host port`,
        );
      }
    });
  }
}

/**
 * Orders services so each comes after everything it depends on (file order otherwise). A cycle is
 * a violation at the `depends_on` of a service on it, naming the whole cycle.
 */
function dependencyOrder(services: readonly ComposeService[], r: ComposeReader): ComposeService[] {
  const byName = new Map(services.map((s) => [s.name, s]));
  const state = new Map<string, "visiting" | "done">();
  const out: ComposeService[] = [];
  let reported = false;
  const visit = (s: ComposeService, trail: string[]): void => {
    const st = state.get(s.name);
    if (st === "done") return;
    if (st === "visiting") {
      if (!reported) {
        const cycle = [...trail.slice(trail.indexOf(s.name)), s.name];
        r.fail(`services.${cycle[cycle.length - 2]}.depends_on.${s.name}`, `dependency cycle: ${cycle.join(" -> ")}`);
        reported = true;
      }
      return;
    }
    state.set(s.name, "visiting");
    for (const dep of Object.keys(s.dependsOn)) {
      const d = byName.get(dep);
      if (d) visit(d, [...trail, s.name]);
    }
    state.set(s.name, "done");
    out.push(s);
  };
  for (const s of services) visit(s, []);
  return out;
}
