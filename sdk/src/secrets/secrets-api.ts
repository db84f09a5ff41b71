import type { api } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";

/** A secret's data: each key's value as text (UTF-8) or bytes. */
export type SecretValues = Readonly<Record<string, string | Uint8Array>>;

/**
 * Secrets that workloads reference (container `secretEnv`, `secretFiles`). Values are write-only:
 * they are stored encrypted, sent only to the node that runs a referencing replica, and no read
 * returns them — `get` and `list` give metadata (keys, version, times, users).
 *
 * ```ts
 * await client.secrets.put("db", { password: "s3cr3t" });
 * await client.workloads.apply(container({ id: "api", image: "app:1", secretEnv: { DB_PASSWORD: { secret: "db", key: "password" } } }));
 * const meta = await client.secrets.get("db"); // { name, keys: ["password"], version: 1, usedBy: ["api"], ... }
 * ```
 */
export class SecretsApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.SecretServiceClient,
  ) {}

  /**
   * Creates or replaces a secret's data. Idempotent: the same data keeps the version (`changed:
   * false`); new data bumps it, and the replicas that use the secret are recreated, rolling.
   * Rejects with INVALID_ARGUMENT naming bad keys (never echoing a value).
   */
  async put(name: string, values: SecretValues, options: CallOptions = {}): Promise<api.PutSecretResponse> {
    const data: Record<string, Buffer> = {};
    const stringData: Record<string, string> = {};
    for (const [key, value] of Object.entries(values)) {
      if (typeof value === "string") stringData[key] = value;
      else data[key] = Buffer.from(value);
    }
    return this.runner.unary<api.PutSecretResponse>(
      (md, o, cb) => this.client.putSecret({ name, data, stringData }, md, o, cb),
      options,
    );
  }

  /** A secret's metadata; NOT_FOUND when there is none. */
  async get(name: string, options: CallOptions = {}): Promise<api.SecretMetadata> {
    const response = await this.runner.unary<api.GetSecretResponse>(
      (md, o, cb) => this.client.getSecret({ name }, md, o, cb),
      options,
    );
    return response.secret!;
  }

  /** Every secret's metadata, ordered by name. */
  async list(options: CallOptions = {}): Promise<api.SecretMetadata[]> {
    const response = await this.runner.unary<api.ListSecretsResponse>(
      (md, o, cb) => this.client.listSecrets({}, md, o, cb),
      options,
    );
    return response.secrets;
  }

  /**
   * Deletes a secret; resolves `false` when there was none. Rejects with SECRET_IN_USE naming the
   * workloads that reference it, unless `force` (their running replicas keep their values; new ones
   * fail with SECRET_NOT_FOUND).
   */
  async delete(name: string, options: CallOptions & { readonly force?: boolean } = {}): Promise<boolean> {
    const response = await this.runner.unary<api.DeleteSecretResponse>(
      (md, o, cb) => this.client.deleteSecret({ name, force: options.force ?? false }, md, o, cb),
      options,
    );
    return response.deleted;
  }
}
