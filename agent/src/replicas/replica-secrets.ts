import { existsSync } from "node:fs";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type agent, PersysError } from "@persys/schema";
import type { DesiredReplica } from "./desired-replica.js";

/** A secret key a container uses, as its desired replica records it (a reference, never a value). */
export interface SecretEnvRef {
  readonly name: string;
  readonly secret: string;
  readonly key: string;
}

export interface SecretFileRef {
  readonly secret: string;
  readonly key: string;
  /** Absolute path in the container. */
  readonly path: string;
  readonly mode: number;
}

/**
 * The secret values of one replica, in agent memory only (`<secret>/<key>` → bytes): never in the
 * durable state, the logs or a report. Lost when the agent restarts; the control plane sends them
 * again with its next push.
 */
export type ReplicaSecretValues = ReadonlyMap<string, Buffer>;

const id = (secret: string, key: string) => `${secret}/${key}`;

/**
 * The values a request carries for the replica's references. Throws SECRET_NOT_FOUND (retryable)
 * naming the first reference without a value (the reference, never a value), so nothing starts
 * with a secret missing.
 */
export function secretValuesOf(
  request: agent.ApplyWorkloadRequest,
  refs: { readonly env: readonly SecretEnvRef[]; readonly files: readonly SecretFileRef[] },
): ReplicaSecretValues | undefined {
  if (refs.env.length === 0 && refs.files.length === 0) return undefined;
  const values = new Map<string, Buffer>();
  for (const v of request.persysSecrets?.values ?? []) values.set(id(v.secret, v.key), Buffer.from(v.value));
  const missing = [...refs.env, ...refs.files].find((r) => !values.has(id(r.secret, r.key)));
  if (missing) {
    throw new PersysError(
      "SECRET_NOT_FOUND",
      `replica ${request.id}: the request carries no value for secret ${missing.secret} key ${missing.key}`,
    );
  }
  return values;
}

/** SECRET_NOT_FOUND for a replica whose values this agent no longer holds (it restarted). */
export function valuesLost(replicaId: string): PersysError {
  return new PersysError(
    "SECRET_NOT_FOUND",
    `replica ${replicaId}: its secret values are not on this node (the agent restarted); ` +
      "waiting for the control plane to send them again",
  );
}

/** Where a node's secret files go by default: tmpfs (/dev/shm) when there is one, else the temp dir. */
export function defaultSecretRoot(nodeId: string): string {
  return join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "persys-agent-secrets", nodeId);
}

/** What the container is created with: env values and read-only bind mounts of secret files. */
export interface MaterialisedSecrets {
  readonly env: Readonly<Record<string, string>>;
  readonly files: readonly { readonly source: string; readonly target: string }[];
}

/**
 * Secret files on the node: one directory per replica (0700) under `root` (tmpfs when the node has
 * one: /dev/shm), one file per secret file of the container (its mode), bind-mounted read-only.
 * Removed with the replica.
 */
export class SecretFiles {
  constructor(private readonly root: string) {}

  dirOf(replicaId: string): string {
    return join(this.root, replicaId);
  }

  /** Writes the replica's files (replacing what was there) and returns what the container needs. */
  async materialise(
    replicaId: string,
    refs: { readonly env: readonly SecretEnvRef[]; readonly files: readonly SecretFileRef[] },
    values: ReplicaSecretValues | undefined,
  ): Promise<MaterialisedSecrets | undefined> {
    if (refs.env.length === 0 && refs.files.length === 0) return undefined;
    if (!values) throw valuesLost(replicaId);
    const get = (secret: string, key: string) => {
      const value = values.get(id(secret, key));
      if (!value) throw valuesLost(replicaId);
      return value;
    };
    const env = Object.fromEntries(refs.env.map((r) => [r.name, get(r.secret, r.key).toString("utf8")]));
    const files: { source: string; target: string }[] = [];
    if (refs.files.length > 0) {
      const dir = this.dirOf(replicaId);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true, mode: 0o700 });
      for (const [i, r] of refs.files.entries()) {
        const source = join(dir, String(i));
        await writeFile(source, get(r.secret, r.key), { mode: 0o600, flag: "wx" });
        await chmod(source, r.mode);
        files.push({ source, target: r.path });
      }
    }
    return { env, files };
  }

  /** Removes the replica's files. Idempotent. */
  async remove(replicaId: string): Promise<void> {
    await rm(this.dirOf(replicaId), { recursive: true, force: true });
  }
}

/** The secret references of a desired replica (containers only; none for other kinds). */
export function secretRefsOf(d: DesiredReplica): { env: readonly SecretEnvRef[]; files: readonly SecretFileRef[] } {
  if (d.kind !== "container") return { env: [], files: [] };
  return { env: d.spec.secretEnv ?? [], files: d.spec.secretFiles ?? [] };
}
