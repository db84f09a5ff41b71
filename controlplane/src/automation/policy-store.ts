import { api, PersysError } from "@persys/schema";
import type { StateStore } from "../state/state-store.js";
import { decodeJson, encodeJson } from "../state/value-codec.js";
import { validatePolicy } from "./policy-validation.js";

/**
 * Policies are desired state: one JSON document per policy under `<prefix>policies/<id>` in the
 * state store (etcd or embedded), written only by ApplyPolicy and DeletePolicy.
 */
export class PolicyStore {
  constructor(
    private readonly store: Pick<StateStore, "get" | "put" | "delete" | "range">,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}policies/${id}`;
  }

  /** Creates or replaces; unchanged input is not rewritten. */
  async apply(input: api.Policy | undefined, now: Date): Promise<{ policy: api.Policy; created: boolean }> {
    const policy = validatePolicy(input);
    const previous = await this.store.get(this.key(policy.id));
    const old = previous ? api.Policy.fromJSON(decodeJson(previous.value)) : undefined;
    const content = (p: api.Policy) => JSON.stringify(api.Policy.toJSON({ ...p, updatedAt: undefined }));
    const same = old !== undefined && content(old) === content(policy);
    if (old && same) return { policy: old, created: false };
    const stored = { ...policy, updatedAt: now };
    await this.store.put(this.key(policy.id), encodeJson(api.Policy.toJSON(stored)));
    return { policy: stored, created: !previous };
  }

  async list(): Promise<api.Policy[]> {
    const { kvs } = await this.store.range(`${this.prefix}policies/`);
    return kvs.map((kv) => api.Policy.fromJSON(decodeJson(kv.value)));
  }

  async delete(id: string, allowMissing: boolean): Promise<void> {
    const result = await this.store.delete(this.key(id));
    if (result.deleted === 0 && !allowMissing) {
      throw new PersysError("NOT_FOUND", `policy ${id} not found`, {
        details: [{ path: "policyId", reason: "no such policy" }],
      });
    }
  }
}
