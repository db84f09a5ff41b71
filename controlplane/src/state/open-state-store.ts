import { type FieldViolation, invalid } from "@persys/schema";
import { EmbeddedStateStore } from "./embedded/embedded-state-store.js";
import { EtcdStateStore } from "./etcd/etcd-state-store.js";
import type { StateStore } from "./state-store.js";

/** etcd (production): `endpoints` are client URLs; `prefix` namespaces every key (e.g. `"/persys/"`). */
export interface EtcdStateStoreConfig {
  readonly kind: "etcd";
  readonly endpoints: readonly string[];
  readonly prefix?: string;
  /** Deadline of each call in ms (default 5000). */
  readonly requestTimeoutMs?: number;
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  readonly auth?: { readonly username: string; readonly password: string };
}

/** Embedded (single node, `persys up`): SQLite in `dataDir`. */
export interface EmbeddedStateStoreConfig {
  readonly kind: "embedded";
  readonly dataDir: string;
  /** Revisions of history kept for watches (default 10 000). */
  readonly historyRevisions?: number;
}

export type StateStoreConfig = EtcdStateStoreConfig | EmbeddedStateStoreConfig;

/**
 * Opens the state store the configuration names. A bad configuration is INVALID_CONFIG naming every bad
 * key (nothing is opened); an unreachable etcd is UNAVAILABLE / DEADLINE_EXCEEDED; an embedded data dir
 * held by another process is STORAGE_ERROR.
 *
 * ```ts
 * const store = await openStateStore({ kind: "embedded", dataDir: "/var/lib/persys/state" });
 * const { revision } = await store.put("/workloads/web", encodeJson({ replicas: 2 }));
 * ```
 */
export async function openStateStore(config: StateStoreConfig): Promise<StateStore> {
  const violations = checkConfig(config);
  if (violations.length > 0) throw invalid("INVALID_CONFIG", violations, "state store configuration");
  if (config.kind === "etcd") return EtcdStateStore.open(config);
  return EmbeddedStateStore.open(config);
}

function positiveInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function checkConfig(config: unknown): FieldViolation[] {
  const out: FieldViolation[] = [];
  if (typeof config !== "object" || config === null) {
    return [{ path: "state", reason: "must be an object with kind etcd or embedded" }];
  }
  const c = config as Record<string, unknown>;
  if (c.kind === "etcd") {
    const endpoints = c.endpoints;
    if (!Array.isArray(endpoints) || endpoints.length === 0) {
      out.push({ path: "endpoints", reason: "must be a non-empty list of etcd client URLs" });
    } else {
      const schemes = new Set<string>();
      endpoints.forEach((endpoint: unknown, i) => {
        const url = typeof endpoint === "string" && URL.canParse(endpoint) ? new URL(endpoint) : undefined;
        if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || !url.port || url.pathname !== "/") {
          out.push({
            path: `endpoints[${i}]`,
            reason: `must be a URL like http://127.0.0.1:2379, got ${String(endpoint)}`,
          });
        } else {
          schemes.add(url.protocol);
        }
      });
      if (schemes.size > 1) out.push({ path: "endpoints", reason: "must all use http or all use https" });
    }
    if (c.prefix !== undefined && typeof c.prefix !== "string")
      out.push({ path: "prefix", reason: "must be a string" });
    if (c.requestTimeoutMs !== undefined && !positiveInteger(c.requestTimeoutMs)) {
      out.push({ path: "requestTimeoutMs", reason: "must be a positive integer (milliseconds)" });
    }
  } else if (c.kind === "embedded") {
    if (typeof c.dataDir !== "string" || c.dataDir.trim() === "") {
      out.push({ path: "dataDir", reason: "must be a non-empty path to a folder" });
    }
    if (c.historyRevisions !== undefined && !positiveInteger(c.historyRevisions)) {
      out.push({ path: "historyRevisions", reason: "must be a positive integer" });
    }
  } else {
    out.push({ path: "kind", reason: `must be "etcd" or "embedded", got ${JSON.stringify(c.kind) ?? "nothing"}` });
  }
  return out;
}
