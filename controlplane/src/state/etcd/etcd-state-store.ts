import { invalid, PersysError } from "@persys/schema";
import type { Etcd3 } from "etcd3";
import { prefixEnd, prefixRange } from "../key-range.js";
import { type KeepAliveLoop, startKeepAliveLoop } from "../lease-keep-alive.js";
import type {
  DeleteOptions,
  DeleteResult,
  KeyValue,
  LeaseGrant,
  LeaseId,
  LeaseKeepAlive,
  LeaseStatus,
  PutOptions,
  PutResult,
  RangeOptions,
  RangeResult,
  Revision,
  RevokeResult,
  StateStore,
  TxnRequest,
  TxnResult,
  Watch,
  WatchOptions,
} from "../state-store.js";
import {
  compactArgument,
  deleteArguments,
  keyArguments,
  leaseArgument,
  putArguments,
  rangeArguments,
  ttlArgument,
  txnArguments,
  watchArguments,
} from "../state-store-arguments.js";
import { leaseNotFound, storeClosed } from "../state-store-errors.js";
import { asBuffer } from "../value-codec.js";
import { etcdClient } from "./etcd-client.js";
import { EtcdCodec, revision } from "./etcd-codec.js";
import { type EtcdCallContext, etcdError } from "./etcd-errors.js";
import { etcdCompare, etcdRequestOp, txnOpResult } from "./etcd-txn-codec.js";
import { EtcdWatch } from "./etcd-watch.js";
import { type KeepAliveStream, LeaseRenewalStream } from "./lease-renewal-stream.js";

/** Calls that may be repeated without changing their effect. */
const IDEMPOTENT_OPS = new Set([
  "get",
  "range",
  "currentRevision",
  "watch",
  "keepAliveOnce",
  "revokeLease",
  "leaseTimeToLive",
]);

export interface EtcdStateStoreOptions {
  /** Client URLs, e.g. `["https://etcd-0:2379"]`. */
  readonly endpoints: readonly string[];
  /** Namespace for every key (e.g. `"/persys/"`); keys given and returned are relative to it. */
  readonly prefix?: string;
  /** Deadline of each unary call, and of registering a watch, in ms. Default 5000. */
  readonly requestTimeoutMs?: number;
  /** TLS material for `https://` endpoints (PEM). */
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** etcd user authentication. */
  readonly auth?: { readonly username: string; readonly password: string };
}

const NO_END = Buffer.of(0);
/** Attempts of a call that is safe to repeat (reads, renewals, revocation). Writes are sent once. */
const IDEMPOTENT_ATTEMPTS = 3;

/**
 * The production state store: etcd v3 through the `etcd3` client's KV, Lease and Watch services. All of
 * etcd's guarantees carry over: a write resolves once committed by a quorum; revisions are etcd's
 * (cluster-wide, so they advance with writes outside this store's prefix too).
 *
 * Failures are typed (see `etcdError`). Reads, lease renewals and revocations are retried (up to three
 * attempts) on UNAVAILABLE / DEADLINE_EXCEEDED; writes (put, delete, txn, grant, compact) are sent once,
 * so a write rejected with a retryable error may or may not have been applied: the caller decides
 * whether to repeat it (puts and deletes are idempotent in value) or to re-read first.
 */
export class EtcdStateStore implements StateStore {
  readonly kind = "etcd" as const;
  private readonly codec: EtcdCodec;
  private readonly watches = new Set<EtcdWatch>();
  private readonly keepAlives = new Set<KeepAliveLoop>();
  private readonly timeoutMs: number;
  private readonly renewals: LeaseRenewalStream;
  private closed = false;

  private constructor(
    private readonly client: Etcd3,
    options: EtcdStateStoreOptions,
  ) {
    this.codec = new EtcdCodec(options.prefix ?? "");
    this.timeoutMs = options.requestTimeoutMs ?? 5000;
    this.renewals = new LeaseRenewalStream(
      () => client.leaseClient.leaseKeepAlive() as Promise<KeepAliveStream>,
      this.timeoutMs,
    );
  }

  /** Connects and checks that etcd answers (UNAVAILABLE / DEADLINE_EXCEEDED when it does not). */
  static async open(options: EtcdStateStoreOptions): Promise<EtcdStateStore> {
    const client = etcdClient({
      endpoints: options.endpoints,
      timeoutMs: options.requestTimeoutMs ?? 5000,
      ...(options.tls ? { tls: options.tls } : {}),
      ...(options.auth ? { auth: options.auth } : {}),
    });
    const store = new EtcdStateStore(client, options);
    try {
      await store.currentRevision();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    keyArguments(key);
    const response = await this.call({ op: "get" }, () => this.client.kv.range({ key: this.codec.key(key) }));
    const kv = response.kvs[0];
    return kv && this.codec.keyValue(kv);
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    rangeArguments(prefix, options);
    const startAfter = options.startAfter === undefined ? undefined : this.codec.key(options.startAfter);
    const range = prefixRange(this.codec.key(prefix), startAfter);
    if (range.empty) return { kvs: [], more: false, count: 0, revision: await this.currentRevision() };
    const response = await this.call({ op: "range" }, () =>
      this.client.kv.range({
        key: range.start.length > 0 ? range.start : NO_END,
        range_end: range.end ?? NO_END,
        ...(options.limit ? { limit: options.limit } : {}),
        ...(options.keysOnly ? { keys_only: true } : {}),
      }),
    );
    return {
      kvs: response.kvs.map((kv) => this.codec.keyValue(kv, options.keysOnly === true)),
      more: response.more,
      count: revision(response.count),
      revision: revision(response.header.revision),
    };
  }

  async put(key: string, value: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    putArguments(key, value, options);
    const context: EtcdCallContext = {
      op: "put",
      ...(options.lease ? { lease: { id: options.lease, paths: ["lease"] } } : {}),
    };
    const response = await this.call(context, () =>
      this.client.kv.put({
        key: this.codec.key(key),
        value: asBuffer(value),
        ...(options.lease ? { lease: options.lease } : {}),
        ...(options.prevKv ? { prev_kv: true } : {}),
      }),
    );
    return {
      revision: revision(response.header.revision),
      ...(options.prevKv && response.prev_kv ? { prevKv: this.codec.keyValue(response.prev_kv) } : {}),
    };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    deleteArguments(key, options, "key");
    return this.deleteRange(this.codec.key(key), undefined, options);
  }

  async deletePrefix(prefix: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    deleteArguments(prefix, options, "prefix");
    const key = this.codec.key(prefix);
    return this.deleteRange(key, prefixEnd(key) ?? NO_END, options);
  }

  async txn(request: TxnRequest): Promise<TxnResult> {
    txnArguments(request);
    // etcd does not say which lease it did not find: name every op that carries one.
    const leaseIds = new Set<string>();
    const leasePaths: string[] = [];
    const ops = (branch: "success" | "failure") =>
      (request[branch] ?? []).map((op, i) => {
        if (op.type === "put" && op.lease) {
          leaseIds.add(op.lease);
          leasePaths.push(`${branch}[${i}].lease`);
        }
        return etcdRequestOp(this.codec, op);
      });
    const body = {
      compare: (request.compare ?? []).map((c) => etcdCompare(this.codec, c)),
      success: ops("success"),
      failure: ops("failure"),
    };
    const lease = { id: [...leaseIds].join(", "), paths: leasePaths };
    const response = await this.call({ op: "txn", ...(leasePaths.length > 0 ? { lease } : {}) }, () =>
      this.client.kv.txn(body),
    );
    const branch = (response.succeeded ? request.success : request.failure) ?? [];
    return {
      succeeded: response.succeeded,
      revision: revision(response.header.revision),
      results: branch.map((op, i) => txnOpResult(this.codec, op, response.responses[i], response.header.revision)),
    };
  }

  async watch(prefix: string, options: WatchOptions): Promise<Watch> {
    watchArguments(prefix, options);
    this.ensureOpen();
    const key = this.codec.key(prefix);
    const rangeEnd = prefixEnd(key) ?? NO_END;
    const start = key.length > 0 ? key : NO_END;
    if (options.afterRevision !== undefined) await this.checkNotCompacted(start, rangeEnd, options.afterRevision);
    const watch = new EtcdWatch({
      client: this.client,
      codec: this.codec,
      key: start,
      rangeEnd,
      options,
      timeoutMs: this.timeoutMs,
      onEnd: (w) => this.watches.delete(w),
    });
    this.watches.add(watch);
    await watch.start();
    return watch;
  }

  async grantLease(ttl: number): Promise<LeaseGrant> {
    ttlArgument(ttl);
    const response = await this.call({ op: "grantLease" }, () => this.client.leaseClient.leaseGrant({ TTL: ttl }));
    if (response.error) throw new PersysError("STORAGE_ERROR", `etcd grantLease failed: ${response.error}`);
    return { id: response.ID, ttl: revision(response.TTL) };
  }

  async keepAliveOnce(lease: LeaseId): Promise<LeaseGrant> {
    leaseArgument(lease);
    const context = { op: "keepAliveOnce", lease: { id: lease, paths: ["lease"] } };
    const ttl = revision(await this.call(context, () => this.renewals.renew(lease)));
    if (ttl <= 0) throw leaseNotFound(lease);
    return { id: lease, ttl };
  }

  keepAlive(lease: LeaseId): LeaseKeepAlive {
    leaseArgument(lease);
    this.ensureOpen();
    const loop = startKeepAliveLoop({
      lease,
      renew: (id) => this.keepAliveOnce(id),
      onEnd: () => this.keepAlives.delete(loop),
    });
    this.keepAlives.add(loop);
    return { ended: loop.ended, stop: () => loop.stop() };
  }

  async revokeLease(lease: LeaseId): Promise<RevokeResult> {
    leaseArgument(lease);
    try {
      const response = await this.call({ op: "revokeLease", lease: { id: lease, paths: ["lease"] } }, () =>
        this.client.leaseClient.leaseRevoke({ ID: lease }),
      );
      return { revision: revision(response.header.revision), revoked: true };
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") {
        return { revision: await this.currentRevision(), revoked: false };
      }
      throw error;
    }
  }

  async leaseTimeToLive(lease: LeaseId): Promise<LeaseStatus | undefined> {
    leaseArgument(lease);
    const response = await this.call({ op: "leaseTimeToLive" }, () =>
      this.client.leaseClient.leaseTimeToLive({ ID: lease, keys: true }),
    );
    const ttl = revision(response.TTL);
    if (ttl < 0) return undefined;
    const keys = response.keys
      .filter((key) => this.codec.owns(key))
      .map((key) => this.codec.unkey(key))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return { id: lease, ttl, grantedTtl: revision(response.grantedTTL), keys };
  }

  async currentRevision(): Promise<Revision> {
    const key = this.codec.namespace.length > 0 ? this.codec.namespace : NO_END;
    const response = await this.call({ op: "currentRevision" }, () => this.client.kv.range({ key, count_only: true }));
    return revision(response.header.revision);
  }

  async compact(target: Revision): Promise<void> {
    compactArgument(target);
    try {
      await this.call({ op: "compact" }, () => this.client.kv.compact({ revision: target }));
    } catch (error) {
      const message = error instanceof PersysError && error.cause instanceof Error ? error.cause.message : "";
      if (error instanceof PersysError && error.code === "COMPACTED") return;
      if (message.includes("future revision")) {
        throw invalid("INVALID_ARGUMENT", [{ path: "revision", reason: "is a future revision" }]);
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of [...this.watches]) watch.close();
    for (const loop of [...this.keepAlives]) loop.abort(storeClosed());
    this.renewals.close();
    this.client.close();
  }

  private async deleteRange(key: Buffer, rangeEnd: Buffer | undefined, options: DeleteOptions): Promise<DeleteResult> {
    const response = await this.call({ op: rangeEnd ? "deletePrefix" : "delete" }, () =>
      this.client.kv.deleteRange({
        key,
        ...(rangeEnd ? { range_end: rangeEnd } : {}),
        ...(options.prevKv ? { prev_kv: true } : {}),
      }),
    );
    return {
      revision: revision(response.header.revision),
      deleted: revision(response.deleted),
      ...(options.prevKv ? { prevKvs: response.prev_kvs.map((kv) => this.codec.keyValue(kv)) } : {}),
    };
  }

  /** COMPACTED now, rather than from the stream later, when `afterRevision + 1` is no longer kept. */
  private async checkNotCompacted(key: Buffer, rangeEnd: Buffer, afterRevision: Revision): Promise<void> {
    try {
      await this.call({ op: "watch", afterRevision }, () =>
        this.client.kv.range({ key, range_end: rangeEnd, revision: afterRevision + 1, count_only: true }),
      );
    } catch (error) {
      const cause = error instanceof PersysError && error.cause instanceof Error ? error.cause.message : "";
      if (!cause.includes("future revision")) throw error;
    }
  }

  private async call<T>(context: EtcdCallContext, fn: () => Promise<T>): Promise<T> {
    const attempts = IDEMPOTENT_OPS.has(context.op) ? IDEMPOTENT_ATTEMPTS : 1;
    for (let attempt = 1; ; attempt++) {
      this.ensureOpen();
      try {
        return await fn();
      } catch (error) {
        const failure = etcdError(error, context);
        const transient = failure.code === "UNAVAILABLE" || failure.code === "DEADLINE_EXCEEDED";
        if (!transient || attempt >= attempts || this.closed) throw failure;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  private ensureOpen(): void {
    if (this.closed) throw storeClosed();
  }
}
