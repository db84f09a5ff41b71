/**
 * The `StateStore`: a key-value store with etcd's semantics, holding the control plane's desired state,
 * assignments, node records, leases and leader election. Two implementations share this contract and one
 * conformance suite: `EtcdStateStore` (production) and `EmbeddedStateStore` (single node, SQLite).
 *
 * The model, as in etcd v3:
 * - Keys are non-empty strings, ordered by their UTF-8 bytes. Values are bytes (`Uint8Array`; the stores
 *   return `Buffer`s); `encodeJson`/`decodeJson` convert.
 * - Every change bumps one store-wide revision counter by exactly one, whatever it touches (one put, a
 *   prefix delete, a transaction with many writes, a lease expiry). Operations that change nothing (a
 *   delete of a missing key, a read-only transaction) do not bump it.
 * - Each key carries `createRevision` (revision of the put that created it), `modRevision` (of the last
 *   change) and `version` (number of puts since creation; 0 for a missing key).
 * - When a write's promise resolves, the write is durable (etcd: committed by a quorum; embedded: fsynced)
 *   and visible to every later read and watch. A rejected write with a retryable error (UNAVAILABLE,
 *   STORAGE_ERROR, DEADLINE_EXCEEDED) may or may not have been applied: re-read, or repeat it (puts and
 *   deletes are idempotent in value; a compare-guarded transaction fails its compare if it was applied).
 *
 * Errors are `PersysError`s: INVALID_ARGUMENT naming each bad field in `details` (nothing is written),
 * NOT_FOUND for an unknown or expired lease, COMPACTED for a watch from a revision no longer kept,
 * UNAVAILABLE / STORAGE_ERROR / DEADLINE_EXCEEDED (retryable) when the backend fails.
 */

import type { PersysError } from "@persys/schema";

/** A store revision: a positive safe integer that only grows. */
export type Revision = number;

/** A lease id: the decimal text of a positive int64 (etcd's lease ids do not fit a JS number). */
export type LeaseId = string;

/** One key with its value and MVCC metadata. */
export interface KeyValue {
  readonly key: string;
  /** The value; empty when read with `keysOnly`. */
  readonly value: Uint8Array;
  /** Revision of the put that created the key (since it last did not exist). */
  readonly createRevision: Revision;
  /** Revision of the last put to the key. */
  readonly modRevision: Revision;
  /** Puts since creation: 1 after the first put. */
  readonly version: number;
  /** The lease the key is attached to, if any; the key is deleted when the lease ends. */
  readonly lease?: LeaseId;
}

export interface RangeOptions {
  /** At most this many keys (a positive integer); all keys when absent. */
  readonly limit?: number;
  /** Only keys strictly after this one (in byte order): pass the last key of the previous page. */
  readonly startAfter?: string;
  /** Return keys and metadata with empty values. */
  readonly keysOnly?: boolean;
}

export interface RangeResult {
  /** The keys in byte order. */
  readonly kvs: readonly KeyValue[];
  /** Whether keys beyond `limit` remain; continue with `startAfter: kvs.at(-1).key`. */
  readonly more: boolean;
  /** Number of keys in the range read (the prefix, after `startAfter`), regardless of `limit`. */
  readonly count: number;
  /** The store revision the read saw. */
  readonly revision: Revision;
}

export interface PutOptions {
  /** Attach the key to this lease (it is deleted when the lease ends); without it, a put detaches. */
  readonly lease?: LeaseId;
  /** Return the key's previous value and metadata. */
  readonly prevKv?: boolean;
}

export interface PutResult {
  /** The revision of this put (= the key's new `modRevision`). */
  readonly revision: Revision;
  /** The key before the put, when asked for with `prevKv` and the key existed. */
  readonly prevKv?: KeyValue;
}

export interface DeleteOptions {
  /** Return the deleted keys. */
  readonly prevKv?: boolean;
}

export interface DeleteResult {
  /** The revision of the delete, or the unchanged current revision when nothing was deleted. */
  readonly revision: Revision;
  /** How many keys were deleted (0 when none existed: deleting is idempotent). */
  readonly deleted: number;
  /** The deleted keys, when asked for with `prevKv`. */
  readonly prevKvs?: readonly KeyValue[];
}

export type CompareOp = "=" | "!=" | "<" | ">";

/**
 * One condition of a transaction. A missing key has version, createRevision and modRevision 0, so
 * `{target: "version", op: "=", value: 0}` means "absent". A `value` compare on a missing key is always
 * false, whatever the operator (as in etcd). Values compare as bytes.
 */
export type Compare =
  | {
      readonly key: string;
      readonly target: "version" | "createRevision" | "modRevision";
      readonly op: CompareOp;
      readonly value: number;
    }
  | { readonly key: string; readonly target: "value"; readonly op: CompareOp; readonly value: Uint8Array };

/**
 * One operation of a transaction. Within one branch, a key may be put at most once and not both put and
 * deleted (etcd's rule); reads see the branch's earlier writes.
 */
export type TxnOp =
  | {
      readonly type: "put";
      readonly key: string;
      readonly value: Uint8Array;
      readonly lease?: LeaseId;
      readonly prevKv?: boolean;
    }
  /** Deletes `key`, or every key starting with `key` when `prefix` is set. */
  | { readonly type: "delete"; readonly key: string; readonly prefix?: boolean; readonly prevKv?: boolean }
  | { readonly type: "get"; readonly key: string };

export type TxnOpResult =
  | { readonly type: "put"; readonly revision: Revision; readonly prevKv?: KeyValue }
  | { readonly type: "delete"; readonly deleted: number; readonly prevKvs?: readonly KeyValue[] }
  | { readonly type: "get"; readonly kv: KeyValue | undefined };

/** At most this many compares, and this many ops per branch, in one transaction (etcd's default). */
export const MAX_TXN_OPS = 128;

export interface TxnRequest {
  /** All must hold for `success` to run; otherwise `failure` runs. No compares: `success` runs. */
  readonly compare?: readonly Compare[];
  readonly success?: readonly TxnOp[];
  readonly failure?: readonly TxnOp[];
}

export interface TxnResult {
  /** Whether every compare held (and so `success` ran). */
  readonly succeeded: boolean;
  /** The revision after the transaction (its writes all carry this revision). */
  readonly revision: Revision;
  /** One result per op of the branch that ran, in order. */
  readonly results: readonly TxnOpResult[];
}

/** A change seen by a watch. Events of one revision (one transaction) arrive together, in op order. */
export type WatchEvent =
  | { readonly type: "put"; readonly key: string; readonly revision: Revision; readonly kv: KeyValue }
  | { readonly type: "delete"; readonly key: string; readonly revision: Revision };

/** Events delivered together: whole revisions, in order, never a part of one. */
export interface WatchBatch {
  readonly events: readonly WatchEvent[];
  /** The revision of the last event in the batch. */
  readonly revision: Revision;
}

export interface WatchOptions {
  /**
   * Deliver every event with a revision greater than this one. Absent: only changes after the watch
   * starts. To see a consistent picture, read with `range` and watch from its `revision`; to resume, pass
   * the last revision seen (`Watch.lastRevision`). Older than what the store keeps: COMPACTED.
   */
  readonly afterRevision?: Revision;
  /** Called for each batch, in revision order, without gaps or duplicates. Throwing ends the watch. */
  readonly onEvents: (batch: WatchBatch) => void;
  /** Called once if the watch ends by failure (the same error `ended` resolves with). */
  readonly onError?: (error: PersysError) => void;
}

/** A running watch. Dropped connections are resumed internally from `lastRevision`. */
export interface Watch {
  /** Every event of the prefix up to this revision has been delivered: the point to resume from. */
  readonly lastRevision: Revision;
  /**
   * Resolves when the watch ends: `undefined` after `cancel()` or store close, or the error that ended it
   * (COMPACTED when resuming needed compacted history; INTERNAL when `onEvents` threw).
   */
  readonly ended: Promise<PersysError | undefined>;
  /** Stops delivery; once it resolves no batch is delivered. Idempotent. */
  cancel(): Promise<void>;
}

export interface LeaseGrant {
  readonly id: LeaseId;
  /** The TTL in seconds the store granted (etcd raises TTLs below its minimum, 2 s by default). */
  readonly ttl: number;
}

export interface LeaseStatus {
  readonly id: LeaseId;
  /** Seconds left before expiry. */
  readonly ttl: number;
  /** The TTL granted. */
  readonly grantedTtl: number;
  /** Keys attached to the lease, in byte order. */
  readonly keys: readonly string[];
}

/** A continuous keep-alive started with `StateStore.keepAlive`. */
export interface LeaseKeepAlive {
  /**
   * Resolves when keeping alive stops: `undefined` after `stop()`, or the reason the lease must be taken
   * as lost: NOT_FOUND (it expired or was revoked), or UNAVAILABLE when it could not be renewed within its
   * TTL (it may then have expired; a holder must act as if it had, e.g. step down as leader).
   */
  readonly ended: Promise<PersysError | undefined>;
  /** Stops renewing (the lease then expires after its TTL unless revoked). Idempotent. */
  stop(): void;
}

export interface RevokeResult {
  /** The revision of the deletion of the lease's keys, or the current revision when it had none. */
  readonly revision: Revision;
  /** False when the lease was already gone (revoking is idempotent). */
  readonly revoked: boolean;
}

export interface StateStore {
  /** Which implementation this is. */
  readonly kind: "etcd" | "embedded";

  /** The key, or `undefined` when it does not exist. */
  get(key: string): Promise<KeyValue | undefined>;

  /** Keys starting with `prefix` (`""`: every key), in byte order, paged with `limit` and `startAfter`. */
  range(prefix: string, options?: RangeOptions): Promise<RangeResult>;

  /** Creates or replaces the key; durable when it resolves. An unknown lease: NOT_FOUND naming `lease`. */
  put(key: string, value: Uint8Array, options?: PutOptions): Promise<PutResult>;

  /** Deletes the key if it exists; deleting a missing key succeeds with `deleted: 0`. */
  delete(key: string, options?: DeleteOptions): Promise<DeleteResult>;

  /** Deletes every key starting with `prefix` (which must not be empty) in one revision. Idempotent. */
  deletePrefix(prefix: string, options?: DeleteOptions): Promise<DeleteResult>;

  /**
   * Evaluates the compares and runs one branch, atomically: either every write of the branch is applied
   * (at one revision) or none is. Invalid requests are rejected before anything is evaluated.
   */
  txn(request: TxnRequest): Promise<TxnResult>;

  /**
   * Watches the keys starting with `prefix`. Resolves once the watch is registered (every later change is
   * delivered); rejects with COMPACTED when `afterRevision` is older than the kept history. (On etcd a
   * compaction racing the registration ends the watch with COMPACTED just after it resolves instead.)
   */
  watch(prefix: string, options: WatchOptions): Promise<Watch>;

  /** Grants a lease of `ttl` seconds (a positive integer). */
  grantLease(ttl: number): Promise<LeaseGrant>;

  /** Renews the lease once, to its full TTL. Unknown or expired: NOT_FOUND naming `lease`. */
  keepAliveOnce(lease: LeaseId): Promise<LeaseGrant>;

  /** Renews the lease every third of its TTL until stopped or lost (see `LeaseKeepAlive.ended`). */
  keepAlive(lease: LeaseId): LeaseKeepAlive;

  /** Ends the lease now, deleting its keys (one revision, delete events). Idempotent. */
  revokeLease(lease: LeaseId): Promise<RevokeResult>;

  /** The lease's remaining TTL and keys, or `undefined` when it does not exist (expired or revoked). */
  leaseTimeToLive(lease: LeaseId): Promise<LeaseStatus | undefined>;

  /** The current store revision, read linearizably (at least that of every write acknowledged before the call). */
  currentRevision(): Promise<Revision>;

  /**
   * Discards history before `revision` (the state at `revision` and later events stay watchable). On
   * etcd this applies to the whole cluster, not only this store's prefix. Compacting to a revision
   * already compacted is a no-op; a future revision is INVALID_ARGUMENT.
   */
  compact(revision: Revision): Promise<void>;

  /** Ends watches and keep-alives and releases the connection or file. Idempotent. */
  close(): Promise<void>;
}
