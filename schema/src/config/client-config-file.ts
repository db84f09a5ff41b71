/**
 * The client configuration file of persysctl and the SDK (`~/.persys/config.yaml`): named contexts
 * with an endpoint and credentials. Here, in the contracts package, so the SDK and the server's
 * `persys pki user --context` read and write one format; `@persys/sdk` re-exports it.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type Document, isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { invalid, PersysError } from "../errors/index.js";

/** One named control plane in `~/.persys/config.yaml`. */
export interface ClientContext {
  readonly name: string;
  /** gRPC endpoint, as the SDK's `PersysClientOptions.endpoint` (`host:port`, or with `https://`). */
  readonly endpoint: string;
  readonly token?: string | undefined;
  /** CA certificate: a path (relative to the config file's folder, `~` expanded) or inline PEM. */
  readonly caCert?: string | undefined;
  readonly clientCert?: string | undefined;
  readonly clientKey?: string | undefined;
}

/** The client configuration file: `{currentContext, contexts: [{name, endpoint, token?, caCert?, clientCert?, clientKey?}]}`. */
export interface ClientConfigFile {
  readonly currentContext?: string | undefined;
  readonly contexts: readonly ClientContext[];
}

const contextKeys = ["name", "endpoint", "token", "caCert", "clientCert", "clientKey"] as const;
/** Keys of the Go persysctl's config file, read as one context named "default". */
const goKeys = ["grpc_endpoint", "api_endpoint", "grpc_insecure", "ca_cert_path", "cert_path", "key_path"];

/** `PERSYS_CONFIG`, else `~/.persys/config.yaml`. */
export function defaultConfigPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.PERSYS_CONFIG || join(env.HOME || homedir(), ".persys", "config.yaml");
}

/**
 * Reads a client configuration file; `undefined` when it does not exist. Paths of certificates are
 * made absolute (relative to the file's folder, `~` expanded). A Go persysctl file (`grpc_endpoint`,
 * `ca_cert_path`, ...) reads as one context named `default`.
 *
 * @throws PersysError INVALID_CONFIG naming the file, line and key of anything malformed or unknown.
 */
export function readClientConfig(path: string): ClientConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new PersysError("INVALID_CONFIG", `cannot read ${path}: ${(error as Error).message}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const where = (offset: number | undefined) => {
    const pos = lines.linePos(offset ?? 0);
    return `${path}:${pos.line}`;
  };
  const problem = (offset: number | undefined, key: string, reason: string) =>
    invalid("INVALID_CONFIG", [{ path: key, reason: `${reason} (${where(offset)})` }], `client config ${path}`);
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw problem(first.pos[0], "(file)", first.message.split("\n")[0] ?? "YAML syntax error");
  }
  const root = doc.contents;
  if (root === null) return { contexts: [] };
  if (!isMap(root)) throw problem(root.range?.[0], "(root)", "must be a mapping");
  const base = dirname(resolve(path));
  const plain = doc.toJS() as Record<string, unknown>;
  if (!("contexts" in plain) && goKeys.some((k) => k in plain)) return goConfig(plain, base);
  const contexts: ClientContext[] = [];
  for (const pair of root.items) {
    const key = String((pair.key as { value?: unknown })?.value ?? pair.key);
    const offset = (pair.key as { range?: [number, number, number] })?.range?.[0];
    if (key === "currentContext") {
      if (typeof plain.currentContext !== "string") throw problem(offset, key, "must be a string");
    } else if (key === "contexts") {
      if (!isSeq(pair.value)) throw problem(offset, key, "must be a list of {name, endpoint, ...}");
      pair.value.items.forEach((item, i) => {
        contexts.push(readContext(item, i, base, problem));
      });
    } else {
      throw problem(offset, key, "unknown key (expected currentContext, contexts)");
    }
  }
  const names = new Set<string>();
  for (const c of contexts) {
    if (names.has(c.name)) throw problem(undefined, "contexts", `context "${c.name}" is defined twice`);
    names.add(c.name);
  }
  return { currentContext: plain.currentContext as string | undefined, contexts };
}

type Problem = (offset: number | undefined, key: string, reason: string) => PersysError;

function readContext(item: unknown, i: number, base: string, problem: Problem): ClientContext {
  const at = `contexts[${i}]`;
  const offset = (item as { range?: [number, number, number] })?.range?.[0];
  if (!isMap(item)) throw problem(offset, at, "must be a mapping {name, endpoint, ...}");
  const fields: Record<string, string> = {};
  for (const pair of item.items) {
    const key = String((pair.key as { value?: unknown })?.value ?? pair.key);
    const keyOffset = (pair.key as { range?: [number, number, number] })?.range?.[0];
    if (!(contextKeys as readonly string[]).includes(key)) {
      throw problem(keyOffset, `${at}.${key}`, `unknown key (expected ${contextKeys.join(", ")})`);
    }
    const value = (pair.value as { value?: unknown })?.value;
    if (typeof value !== "string") throw problem(keyOffset, `${at}.${key}`, "must be a string");
    fields[key] = value;
  }
  if (!fields.name) throw problem(offset, `${at}.name`, "is required");
  if (!fields.endpoint) throw problem(offset, `${at}.endpoint`, "is required");
  const path = (value: string | undefined) => (value === undefined ? undefined : pemPath(value, base));
  return {
    name: fields.name,
    endpoint: fields.endpoint,
    token: fields.token,
    caCert: path(fields.caCert),
    clientCert: path(fields.clientCert),
    clientKey: path(fields.clientKey),
  };
}

function goConfig(plain: Record<string, unknown>, base: string): ClientConfigFile {
  const text = (key: string) => (typeof plain[key] === "string" ? (plain[key] as string) : undefined);
  const insecure = plain.grpc_insecure === true || text("grpc_insecure") === "true";
  const tls = (key: string) => (insecure || !text(key) ? undefined : pemPath(text(key)!, base));
  return {
    currentContext: "default",
    contexts: [
      {
        name: "default",
        endpoint: text("grpc_endpoint") ?? "localhost:8085",
        caCert: tls("ca_cert_path"),
        clientCert: tls("cert_path"),
        clientKey: tls("key_path"),
      },
    ],
  };
}

/** Inline PEM as is; a path with `~` expanded and made absolute relative to `base`. */
function pemPath(value: string, base: string): string {
  if (value.trimStart().startsWith("-----BEGIN")) return value;
  const expanded = value === "~" || value.startsWith("~/") ? join(homedir(), value.slice(1)) : value;
  return isAbsolute(expanded) ? expanded : resolve(base, expanded);
}

/**
 * Sets `currentContext` in the file, keeping its comments and layout.
 *
 * @throws PersysError INVALID_CONFIG when the file does not exist or has no context with that name.
 */
export function useContext(path: string, name: string): void {
  const config = readClientConfig(path);
  if (!config) throw new PersysError("INVALID_CONFIG", `no client config at ${path}; add a context first`);
  if (!config.contexts.some((c) => c.name === name)) {
    const known = config.contexts.map((c) => c.name).join(", ") || "none";
    throw invalid("INVALID_CONFIG", [{ path: "context", reason: `no context "${name}" in ${path} (have: ${known})` }]);
  }
  const doc = parseDocument(readFileSync(path, "utf8"));
  doc.set("currentContext", name);
  writeAtomically(path, doc);
}

/**
 * Adds the context, or replaces the one with the same name; creates the file (and its folder) when
 * missing, and makes the context current when the file had none. Comments elsewhere are kept.
 */
export function saveContext(path: string, context: ClientContext): void {
  let doc: Document;
  try {
    doc = parseDocument(readFileSync(path, "utf8"));
  } catch {
    doc = parseDocument("contexts:\n");
  }
  const entry = Object.fromEntries(Object.entries(context).filter(([, v]) => v !== undefined));
  const contexts = doc.get("contexts");
  if (!isSeq(contexts)) doc.set("contexts", doc.createNode([entry]));
  else {
    const index = contexts.items.findIndex((item) => isMap(item) && item.get("name") === context.name);
    if (index >= 0) contexts.set(index, doc.createNode(entry));
    else contexts.add(doc.createNode(entry));
  }
  if (!doc.has("currentContext")) doc.set("currentContext", context.name);
  writeAtomically(path, doc);
}

function writeAtomically(path: string, doc: Document): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, doc.toString(), { mode: 0o600 });
  renameSync(temp, path);
}
