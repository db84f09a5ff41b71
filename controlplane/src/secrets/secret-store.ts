import { PersysError } from "@persys/schema";
import type { ClusterKeys } from "../cluster/keys.js";
import { decodeRecord, encodeRecord, type SecretRecord } from "../cluster/records.js";
import type { StateStore } from "../state/state-store.js";

/**
 * What seals and opens secret data (the envelope cipher: AES-256-GCM under a fresh data key per
 * secret, the data key wrapped by a key provider). `aad` binds an envelope to one secret version, so
 * an envelope copied to another key or version does not open.
 */
export interface SecretSealer {
  seal(plaintext: Buffer, aad: string): Promise<Buffer | string>;
  open(envelope: Buffer | string, aad: string): Promise<Buffer>;
}

/** A secret's data: key → value bytes. */
export type SecretData = ReadonlyMap<string, Buffer>;

/** The additional authenticated data of a secret version's envelope. */
export const secretAad = (name: string, version: number) => `persys-secret:${name}:${version}`;

/** The plaintext that is sealed: canonical JSON of key → base64 value, keys sorted. */
function payloadOf(data: SecretData): Buffer {
  const keys = [...data.keys()].sort();
  return Buffer.from(JSON.stringify(Object.fromEntries(keys.map((k) => [k, data.get(k)!.toString("base64")]))));
}

export interface PutOutcome {
  readonly record: SecretRecord;
  readonly created: boolean;
  /** Whether anything was written (false: the same data was already stored). */
  readonly changed: boolean;
  /** The store revision to wait for before reading the change from the cluster state. */
  readonly revision: number;
}

/**
 * Secrets in the state store, one record per secret under `<prefix>secrets/<name>`, holding
 * metadata and the sealed data only: a value never reaches the store (etcd or embedded) in plain
 * text. Writes are compare-and-swap on the key's modRevision; a concurrent change of the same secret
 * is CONFLICT (retryable).
 */
export class SecretStore {
  constructor(
    private readonly store: Pick<StateStore, "get" | "txn">,
    private readonly keys: ClusterKeys,
    private readonly sealer: SecretSealer,
  ) {}

  /**
   * Creates or replaces a secret's data. Idempotent: the same data again keeps the version and writes
   * nothing (the stored data is opened and compared; no hash of the values is ever stored).
   *
   * @throws PersysError CONFLICT when the secret changed concurrently; the key provider's error when
   * sealing or opening fails (nothing is written).
   */
  async put(name: string, data: SecretData, now: Date): Promise<PutOutcome> {
    const key = this.keys.secret(name);
    const current = await this.store.get(key);
    const previous = current ? decodeRecord<SecretRecord>(current.value) : undefined;
    const payload = payloadOf(data);
    try {
      if (previous && current) {
        const stored = await this.openPayload(previous);
        const same = stored.equals(payload);
        stored.fill(0);
        if (same) return { record: previous, created: false, changed: false, revision: current.modRevision };
      }
      const version = (previous?.version ?? 0) + 1;
      const sealed = await this.sealer.seal(payload, secretAad(name, version));
      const stamp = now.toISOString();
      const record: SecretRecord = {
        name,
        version,
        keys: [...data.keys()].sort(),
        createdAt: previous?.createdAt ?? stamp,
        updatedAt: stamp,
        ...(typeof sealed === "string"
          ? { envelope: sealed, encoding: "text" as const }
          : { envelope: Buffer.from(sealed).toString("base64"), encoding: "base64" as const }),
      };
      const outcome = await this.store.txn({
        compare: [
          current
            ? { key, target: "modRevision", op: "=", value: current.modRevision }
            : { key, target: "version", op: "=", value: 0 },
        ],
        success: [{ type: "put", key, value: encodeRecord(record) }],
      });
      if (!outcome.succeeded) {
        throw new PersysError("CONFLICT", `secret ${name} changed concurrently; put it again`, { retryable: true });
      }
      return { record, created: !previous, changed: true, revision: outcome.revision };
    } finally {
      payload.fill(0);
    }
  }

  /** Deletes a secret. Idempotent: `deleted` is false when there was none. */
  async delete(name: string): Promise<{ deleted: boolean; revision: number }> {
    const outcome = await this.store.txn({ success: [{ type: "delete", key: this.keys.secret(name) }] });
    const result = outcome.results[0];
    return { deleted: result?.type === "delete" && result.deleted > 0, revision: outcome.revision };
  }

  /**
   * A secret's data, opened. The caller owns the buffers (zero them when done).
   *
   * @throws PersysError from the key provider when the envelope does not open (wrong key, tampered
   * record); the message names the secret and version, never a value.
   */
  async open(record: SecretRecord): Promise<Map<string, Buffer>> {
    const payload = await this.openPayload(record);
    try {
      const json = JSON.parse(payload.toString("utf8")) as Record<string, string>;
      return new Map(Object.entries(json).map(([k, v]) => [k, Buffer.from(v, "base64")]));
    } finally {
      payload.fill(0);
    }
  }

  private async openPayload(record: SecretRecord): Promise<Buffer> {
    const envelope = record.encoding === "text" ? record.envelope : Buffer.from(record.envelope, "base64");
    try {
      return await this.sealer.open(envelope, secretAad(record.name, record.version));
    } catch (error) {
      if (error instanceof PersysError) throw error;
      throw new PersysError(
        "INTERNAL",
        `secret ${record.name} (version ${record.version}) cannot be opened: the key provider refused it`,
        { cause: error },
      );
    }
  }
}
