import { type api, PersysError, type SecretUse, secretUsesOf } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import type { SecretStore } from "./secret-store.js";

function useText(use: SecretUse): string {
  return "env" in use.as ? `secretEnv ${use.as.env}` : `secretFiles ${use.as.path}`;
}

/**
 * Resolves the secret values a replica needs, for the one agent request that runs it. Runs on the
 * leader, at push time only; the values live in memory for the length of the push.
 */
export class SecretResolver {
  constructor(
    private readonly state: Pick<ClusterState, "secrets">,
    private readonly store: Pick<SecretStore, "open">,
  ) {}

  /**
   * The values of every secret key the workload's container uses (only those keys), or undefined
   * when it uses none.
   *
   * @throws PersysError SECRET_NOT_FOUND (retryable) naming the secret, the key and the field that
   * references it, when a secret or key does not exist.
   */
  async resolve(workload: api.Workload): Promise<api.ReplicaSecrets | undefined> {
    if (workload.spec?.$case !== "container") return undefined;
    const uses = secretUsesOf(workload.spec.value);
    if (uses.length === 0) return undefined;
    const opened = new Map<string, { version: number; data: Map<string, Buffer> }>();
    try {
      const values: api.ResolvedSecretKey[] = [];
      const seen = new Set<string>();
      for (const use of uses) {
        let secret = opened.get(use.secret);
        if (!secret) {
          const held = this.state.secrets.get(use.secret)?.value;
          if (!held) {
            throw new PersysError(
              "SECRET_NOT_FOUND",
              `secret ${use.secret} does not exist (used by ${useText(use)}); create it and the replica starts`,
            );
          }
          secret = { version: held.version, data: await this.store.open(held) };
          opened.set(use.secret, secret);
        }
        const value = secret.data.get(use.key);
        if (value === undefined) {
          throw new PersysError(
            "SECRET_NOT_FOUND",
            `secret ${use.secret} has no key ${use.key} (used by ${useText(use)}); add it and the replica starts`,
          );
        }
        const id = `${use.secret}\u0000${use.key}`;
        if (seen.has(id)) continue;
        seen.add(id);
        values.push({ secret: use.secret, key: use.key, value: Buffer.from(value), version: secret.version });
      }
      return { values };
    } finally {
      for (const s of opened.values()) for (const b of s.data.values()) b.fill(0);
    }
  }
}

/**
 * The secret values of a replica's push, or undefined when its workload uses none. Without a
 * resolver (a control plane built without a secret store), a workload that uses secrets fails with
 * SECRET_NOT_FOUND.
 */
export async function resolveSecrets(
  resolver: SecretResolver | undefined,
  workload: api.Workload,
): Promise<api.ReplicaSecrets | undefined> {
  if (resolver) return resolver.resolve(workload);
  if (workload.spec?.$case === "container" && secretUsesOf(workload.spec.value).length > 0) {
    throw new PersysError("SECRET_NOT_FOUND", "this control plane has no secret store; secrets cannot be resolved");
  }
  return undefined;
}
