import type { ContainerSpec } from "../gen/persys/api/v1/container.js";
import type { Workload } from "../gen/persys/api/v1/workload.js";
import { checkAbsolutePath, checkDnsLabel, Violations } from "./violations.js";

/** At most this many bytes of values in one secret (all keys together). */
export const MAX_SECRET_BYTES = 1024 * 1024;

const secretKey = /^[-._a-zA-Z0-9]+$/;

/** Why a secret key is refused, or undefined: 1–253 of [A-Za-z0-9-_.], not "." or "..". */
export function secretKeyProblem(key: string): string | undefined {
  if (!key) return "is required";
  if (key.length > 253) return "secret key must be at most 253 characters";
  if (!secretKey.test(key) || key === "." || key === "..") {
    return "secret key must be letters, digits, '-', '_' and '.' (not '.' or '..')";
  }
  return undefined;
}

/** Why a secret name is refused (a DNS-1123 label, like workload ids), or undefined. */
export function secretNameProblem(name: string): string | undefined {
  const v = new Violations();
  checkSecretName(v, name, "name");
  return v.list[0]?.reason;
}

/** Checks a secret name: a DNS-1123 label, like workload ids. */
export function checkSecretName(v: Violations, name: string, segment: string): void {
  checkDnsLabel(v, name, segment, "secret name");
}

/** One use of a secret key by a container: as an environment variable or as a file. */
export interface SecretUse {
  readonly secret: string;
  /** The key (for env, an empty key in the spec means the variable's own name). */
  readonly key: string;
  readonly as: { readonly env: string } | { readonly path: string; readonly mode: number };
}

/** Default mode of a secret file: read-only for every user of the container. */
export const DEFAULT_SECRET_FILE_MODE = 0o444;

/** Every secret key a container spec uses, in a stable order (env by name, then files in order). */
export function secretUsesOf(spec: ContainerSpec): SecretUse[] {
  const env = Object.entries(spec.secretEnv)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, ref]) => ({ secret: ref.secret, key: ref.key || name, as: { env: name } }));
  const files = spec.secretFiles.map((f) => ({
    secret: f.ref?.secret ?? "",
    key: f.ref?.key ?? "",
    as: { path: f.path, mode: f.mode || DEFAULT_SECRET_FILE_MODE },
  }));
  return [...env, ...files];
}

/** The names of the secrets a workload references, sorted and without duplicates. */
export function secretNamesOf(workload: Pick<Workload, "spec">): string[] {
  const spec = workload.spec;
  if (spec?.$case !== "container") return [];
  return [...new Set(secretUsesOf(spec.value).map((u) => u.secret))].sort();
}

/**
 * Checks a container's secret references: `secretEnv` names and refs (a name must not also be in
 * `env`), `secretFiles` refs, absolute and distinct paths, and modes.
 * Reasons name the field, never a value.
 */
export function validateSecretRefs(v: Violations, spec: ContainerSpec): void {
  for (const [name, ref] of Object.entries(spec.secretEnv)) {
    const item = v.at("secretEnv").at(name);
    checkSecretName(item, ref.secret, "secret");
    if (ref.key) {
      const problem = secretKeyProblem(ref.key);
      if (problem) item.add(problem, "key");
    }
    if (Object.hasOwn(spec.env, name)) item.add("is also set in env; use one of env or secretEnv");
  }
  const seen = new Map<string, number>();
  spec.secretFiles.forEach((file, i) => {
    const item = v.at("secretFiles").at(i);
    if (!file.ref) item.add("is required", "ref");
    else {
      checkSecretName(item.at("ref"), file.ref.secret, "secret");
      const problem = secretKeyProblem(file.ref.key);
      if (problem) item.at("ref").add(problem, "key");
    }
    checkAbsolutePath(item, file.path, "path");
    const path = file.path.replace(/\/+$/, "");
    if (path === "" || path === "/") item.add("must name a file, not /", "path");
    const first = seen.get(path);
    if (first !== undefined) item.add(`is already used by secretFiles[${first}]`, "path");
    else seen.set(path, i);
    if (file.mode < 0 || file.mode > 0o777) item.add("must be a file mode 0..0777 (0: 0444)", "mode");
  });
}

/**
 * pino `redact` options for every Persys logger: fields that carry secret values (the agent
 * request's `persysSecrets`, a put request's `data`/`stringData`) are censored should one ever be
 * logged. Values are kept out of log objects in the first place; this is the second line.
 */
export const secretLogRedaction = {
  paths: [
    "persysSecrets",
    "*.persysSecrets",
    "*.*.persysSecrets",
    "stringData",
    "*.stringData",
    "*.*.stringData",
    "secretValues",
    "*.secretValues",
  ],
  censor: "[REDACTED]",
};
