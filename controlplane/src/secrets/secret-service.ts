import {
  type api,
  type FieldViolation,
  invalid,
  MAX_SECRET_BYTES,
  PersysError,
  secretKeyProblem,
  secretNameProblem,
} from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import type { SecretRecord } from "../cluster/records.js";
import { workloadsUsingSecret } from "./secret-references.js";
import type { SecretStore } from "./secret-store.js";

/** How many workload ids a SECRET_IN_USE message names before "and N more". */
const NAMED_USERS = 10;

/**
 * The `persys.api.v1.SecretService`: put (create or update, idempotent), get and list (metadata
 * only, from the cluster state cache) and delete (refused while referenced, unless forced). Errors
 * name fields and keys, never a value. Every server serves it.
 */
export class SecretService {
  constructor(
    private readonly state: ClusterState,
    private readonly store: SecretStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * @throws PersysError INVALID_ARGUMENT naming each bad field (nothing is written), CONFLICT on a
   * concurrent change of the same secret.
   */
  async putSecret(request: api.PutSecretRequest): Promise<api.PutSecretResponse> {
    const data = dataOf(request);
    const outcome = await this.store.put(request.name, data, new Date(this.now()));
    for (const value of data.values()) value.fill(0);
    await this.state.waitFor(outcome.revision);
    return { secret: this.metadata(outcome.record), created: outcome.created, changed: outcome.changed };
  }

  /** @throws PersysError NOT_FOUND for an unknown secret. */
  async getSecret(request: api.GetSecretRequest): Promise<api.GetSecretResponse> {
    const name = requireName(request.name);
    const held = this.state.secrets.get(name);
    if (!held) {
      throw new PersysError("NOT_FOUND", `secret ${name} not found`, {
        details: [{ path: "name", reason: "no such secret" }],
      });
    }
    return { secret: this.metadata(held.value) };
  }

  async listSecrets(_request: api.ListSecretsRequest): Promise<api.ListSecretsResponse> {
    const names = [...this.state.secrets.keys()].sort();
    return { secrets: names.map((n) => this.metadata(this.state.secrets.get(n)!.value)) };
  }

  /**
   * Deletes a secret; a missing one is a success (`deleted: false`).
   *
   * @throws PersysError SECRET_IN_USE naming the workloads that reference it, unless `force`.
   */
  async deleteSecret(request: api.DeleteSecretRequest): Promise<api.DeleteSecretResponse> {
    const name = requireName(request.name);
    const users = workloadsUsingSecret(this.state, name);
    if (users.length > 0 && !request.force && this.state.secrets.has(name)) {
      const named = users.slice(0, NAMED_USERS).join(", ");
      const more = users.length > NAMED_USERS ? ` and ${users.length - NAMED_USERS} more` : "";
      throw new PersysError(
        "SECRET_IN_USE",
        `secret ${name} is used by workload${users.length > 1 ? "s" : ""} ${named}${more}; ` +
          "remove the references first, or delete with force",
        { details: [{ path: "name", reason: `referenced by ${named}${more}` }] },
      );
    }
    const outcome = await this.store.delete(name);
    await this.state.waitFor(outcome.revision);
    return { deleted: outcome.deleted };
  }

  private metadata(record: SecretRecord): api.SecretMetadata {
    return {
      name: record.name,
      keys: [...record.keys],
      version: record.version,
      createdAt: new Date(record.createdAt),
      updatedAt: new Date(record.updatedAt),
      usedBy: workloadsUsingSecret(this.state, record.name),
    };
  }
}

function requireName(name: string): string {
  const problem = secretNameProblem(name);
  if (problem) throw invalid("INVALID_ARGUMENT", [{ path: "name", reason: problem }], "secret");
  return name;
}

/** The request's data and stringData merged, checked: a valid name, valid keys, none twice, ≤ 1 MiB. */
export function dataOf(request: api.PutSecretRequest): Map<string, Buffer> {
  const problems: FieldViolation[] = [];
  const nameProblem = secretNameProblem(request.name);
  if (nameProblem) problems.push({ path: "name", reason: nameProblem });
  const data = new Map<string, Buffer>();
  let size = 0;
  for (const [field, entries] of [
    ["data", Object.entries(request.data).map(([k, b]) => [k, Buffer.from(b)] as const)],
    ["stringData", Object.entries(request.stringData).map(([k, s]) => [k, Buffer.from(s, "utf8")] as const)],
  ] as const) {
    for (const [key, value] of entries) {
      const problem = secretKeyProblem(key);
      if (problem) problems.push({ path: `${field}.${key || '""'}`, reason: problem });
      else if (data.has(key)) problems.push({ path: `stringData.${key}`, reason: "is also in data; set it once" });
      data.set(key, value);
      size += value.length;
    }
  }
  if (size > MAX_SECRET_BYTES) {
    problems.push({ path: "data", reason: `values total ${size} bytes; the limit is ${MAX_SECRET_BYTES} (1 MiB)` });
  }
  if (problems.length > 0) {
    for (const value of data.values()) value.fill(0);
    throw invalid("INVALID_ARGUMENT", problems, "secret");
  }
  return data;
}
