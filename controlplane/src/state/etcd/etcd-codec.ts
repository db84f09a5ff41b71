import { PersysError } from "@persys/schema";
import type { IKeyValue } from "etcd3";
import type { KeyValue, Revision } from "../state-store.js";

/**
 * Conversions between the store's types and etcd's wire types, under a key namespace: every key is
 * stored in etcd as `namespace + key`, and results are given back without it.
 */
export class EtcdCodec {
  readonly namespace: Buffer;

  constructor(namespace: string) {
    this.namespace = Buffer.from(namespace, "utf8");
  }

  /** The etcd key for a store key (or prefix). */
  key(key: string): Buffer {
    return Buffer.concat([this.namespace, Buffer.from(key, "utf8")]);
  }

  /** The store key for an etcd key under the namespace. */
  unkey(key: Buffer): string {
    return key.subarray(this.namespace.length).toString("utf8");
  }

  /** Whether an etcd key lies under the namespace. */
  owns(key: Buffer): boolean {
    return key.length >= this.namespace.length && key.subarray(0, this.namespace.length).equals(this.namespace);
  }

  keyValue(kv: IKeyValue, keysOnly = false): KeyValue {
    return {
      key: this.unkey(kv.key),
      value: keysOnly ? Buffer.alloc(0) : (kv.value ?? Buffer.alloc(0)),
      createRevision: revision(kv.create_revision),
      modRevision: revision(kv.mod_revision),
      version: revision(kv.version),
      ...(kv.lease && kv.lease !== "0" ? { lease: kv.lease } : {}),
    };
  }
}

/** An etcd int64 (sent as decimal text) as a number; STORAGE_ERROR past 2^53 (never in practice). */
export function revision(value: string | number | undefined): Revision {
  const n = Number(value ?? 0);
  if (!Number.isSafeInteger(n)) {
    throw new PersysError("STORAGE_ERROR", `etcd returned a revision beyond 2^53: ${String(value)}`, {
      retryable: false,
    });
  }
  return n;
}
