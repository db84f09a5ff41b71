import { PersysError } from "@persys/schema";
import type { Etcd3, IDuplexStream, IWatchRequest, IWatchResponse } from "etcd3";
import type { Revision, Watch, WatchEvent, WatchOptions } from "../state-store.js";
import { compactedError } from "../state-store-errors.js";
import { type EtcdCodec, revision } from "./etcd-codec.js";
import { etcdError } from "./etcd-errors.js";

type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 2000;

export interface EtcdWatchSetup {
  readonly client: Etcd3;
  readonly codec: EtcdCodec;
  /** The etcd key range `[key, rangeEnd)` watched. */
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly options: WatchOptions;
  /** How long the first registration may take. */
  readonly timeoutMs: number;
  /** Called once when the watch ends. */
  readonly onEnd: (watch: EtcdWatch) => void;
}

/**
 * A watch on its own etcd watch stream, with our own resume logic (not etcd3's `Watcher`, which resumes
 * from the header revision of its last response and can skip events it had not yet received).
 *
 * `lastRevision` only advances past events actually delivered (plus, on a watch started "from now", the
 * revision etcd registered it at). When the stream breaks, a new one is opened from `lastRevision + 1`,
 * with backoff, until it succeeds or the watch is cancelled; delivered revisions are never repeated
 * (events at or below `lastRevision` are dropped). Progress notifications are not used to advance the
 * resume point (etcd 3.4 can send them ahead of undelivered events).
 */
export class EtcdWatch implements Watch {
  private last: Revision | undefined;
  private stream: WatchStream | undefined;
  private established = false;
  private done = false;
  private backoffMs = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private resolveEnded!: (reason: PersysError | undefined) => void;
  readonly ended = new Promise<PersysError | undefined>((resolve) => {
    this.resolveEnded = resolve;
  });
  private settleStart: { resolve: () => void; reject: (error: PersysError) => void } | undefined;

  constructor(private readonly setup: EtcdWatchSetup) {
    this.last = setup.options.afterRevision;
  }

  get lastRevision(): Revision {
    return this.last ?? 0;
  }

  /** Opens the first stream; resolves once etcd registered the watch. */
  start(): Promise<void> {
    const started = new Promise<void>((resolve, reject) => {
      this.settleStart = { resolve, reject };
    });
    const timer = setTimeout(() => {
      if (!this.established) {
        this.fail(
          new PersysError("DEADLINE_EXCEEDED", `etcd did not register the watch within ${this.setup.timeoutMs} ms`),
        );
      }
    }, this.setup.timeoutMs);
    void this.connect();
    return started.finally(() => clearTimeout(timer));
  }

  async cancel(): Promise<void> {
    this.finish(undefined);
  }

  /** Ends the watch (store closed). */
  close(): void {
    this.finish(undefined);
  }

  private async connect(): Promise<void> {
    if (this.done) return;
    let stream: WatchStream;
    try {
      stream = await this.setup.client.watchClient.watch();
    } catch (error) {
      this.broken(undefined, error);
      return;
    }
    if (this.done) {
      endStream(stream);
      return;
    }
    this.stream = stream;
    stream.on("data", (response) => this.receive(stream, response));
    stream.on("error", (error) => this.broken(stream, error));
    stream.on("end", () => this.broken(stream, new Error("etcd closed the watch stream")));
    stream.write({
      create_request: {
        key: this.setup.key,
        range_end: this.setup.rangeEnd,
        // start_revision 0 means "from now"; otherwise resume right after the last delivered revision.
        start_revision: this.last === undefined ? 0 : this.last + 1,
      },
    });
  }

  private receive(stream: WatchStream, response: IWatchResponse): void {
    if (this.done || stream !== this.stream) return;
    if (response.canceled) {
      this.cancelledByServer(response);
      return;
    }
    if (response.created) {
      if (this.last === undefined) this.last = revision(response.header.revision);
      this.established = true;
      this.backoffMs = RECONNECT_MIN_MS;
      this.settleStart?.resolve();
      this.settleStart = undefined;
      return;
    }
    const last = this.last ?? 0;
    const events: WatchEvent[] = [];
    for (const event of response.events) {
      const rev = revision(event.kv.mod_revision);
      if (rev <= last) continue;
      const key = this.setup.codec.unkey(event.kv.key);
      events.push(
        event.type === "Delete"
          ? { type: "delete", key, revision: rev }
          : { type: "put", key, revision: rev, kv: this.setup.codec.keyValue(event.kv) },
      );
    }
    const lastEvent = events.at(-1);
    if (!lastEvent) return;
    try {
      this.setup.options.onEvents({ events, revision: lastEvent.revision });
    } catch (error) {
      this.fail(new PersysError("INTERNAL", `watch listener threw: ${String(error)}`, { cause: error }));
      return;
    }
    this.last = lastEvent.revision;
  }

  private cancelledByServer(response: IWatchResponse): void {
    const compactRevision = revision(response.compact_revision);
    const reason = response.cancel_reason || "no reason given";
    if (compactRevision > 0) this.fail(compactedError(this.lastRevision, compactRevision));
    else if (reason.includes("no leader")) this.broken(this.stream, new Error(reason));
    else this.fail(new PersysError("STORAGE_ERROR", `etcd cancelled the watch: ${reason}`, { retryable: false }));
  }

  /** The stream failed: before registration the watch fails; after, it reconnects with backoff. */
  private broken(stream: WatchStream | undefined, error: unknown): void {
    if (this.done || stream !== this.stream) return;
    this.stream = undefined;
    if (stream) endStream(stream);
    if (!this.established) {
      this.fail(etcdError(error, { op: "watch", ...(this.last === undefined ? {} : { afterRevision: this.last }) }));
      return;
    }
    const delay = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(RECONNECT_MAX_MS, this.backoffMs * 2);
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
  }

  private fail(error: PersysError): void {
    if (this.done) return;
    if (this.settleStart) {
      this.settleStart.reject(error);
      this.settleStart = undefined;
      this.finish(undefined, false);
      return;
    }
    this.finish(error);
  }

  private finish(reason: PersysError | undefined, notify = true): void {
    if (this.done) return;
    this.done = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const stream = this.stream;
    this.stream = undefined;
    if (stream) endStream(stream);
    this.settleStart?.resolve();
    this.settleStart = undefined;
    if (reason && notify) this.setup.options.onError?.(reason);
    this.resolveEnded(reason);
    this.setup.onEnd(this);
  }
}

/**
 * Ends a watch stream without tripping etcd3's connection pool: etcd3 treats an error on a stream
 * that is still writable (a plain `cancel()` gives CANCELLED) as a failed host, closing every channel
 * to it and counting towards its circuit breaker. Half-closing first makes the stream non-writable.
 */
function endStream(stream: WatchStream): void {
  stream.on("error", () => {});
  stream.end();
  stream.cancel();
}
