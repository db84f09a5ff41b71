import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { PersysError } from "@persys/schema";
import type { EventIdParts } from "../event-id.js";
import type {
  CounterOptions,
  EventAppendOptions,
  EventId,
  EventReadOptions,
  EventRecord,
  EventStore,
  EventStoreHealth,
  EventSubscribeOptions,
  EventSubscription,
  SeriesSample,
  SeriesSampleOptions,
  StoredEvent,
} from "../event-store.js";
import { subscribeArguments } from "../event-store-arguments.js";
import { HealthSignal } from "../health-signal.js";
import { trackedSubscription, untilAborted } from "../pull-subscription.js";
import type { EmbeddedEventStoreOptions } from "./embedded-event-store.js";
import { fromWire, type WorkerMethod, type WorkerReply, type WorkerRequest } from "./event-worker-protocol.js";

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const closedError = () => new PersysError("UNAVAILABLE", "event store is closed", { retryable: false });

/**
 * The embedded event store with its SQLite work on a worker thread (embedded-event-worker.ts): the
 * control plane's thread only validates subscriptions and passes messages, batched per turn of the
 * event loop each way, while commits, WAL checkpoints and sweeps run on the other core. Same
 * semantics as EmbeddedEventStore (the worker runs one), errors typed as there; appends keep their
 * order (one queue each way).
 */
export class ThreadedEventStore implements EventStore {
  readonly kind = "embedded";
  private readonly pending = new Map<number, Pending>();
  private readonly healthSignal: HealthSignal;
  private readonly subscriptions = new Set<EventSubscription>();
  private outbox: WorkerRequest[] = [];
  private nextId = 1;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Set when the worker died: every call fails with it. */
  private lost: PersysError | undefined;

  private constructor(
    private readonly worker: Worker,
    health: EventStoreHealth,
  ) {
    this.healthSignal = new HealthSignal(health);
    worker.on("message", (replies: WorkerReply[]) => {
      for (const reply of replies) this.receive(reply);
    });
    const lost = (why: string) => {
      this.lost = new PersysError("STORAGE_ERROR", `event store ${why}`);
      this.setHealth({ state: "degraded", reason: why });
      for (const p of this.pending.values()) p.reject(this.lost);
      this.pending.clear();
    };
    worker.on("error", (error) => lost(`worker failed: ${error.message}`));
    worker.on("exit", (code) => {
      if (!this.closing) lost(`worker exited (${code})`);
    });
    worker.unref();
  }

  /** Starts the worker and opens the store in `dataDir` there; rejects like EmbeddedEventStore.open. */
  static async open(options: EmbeddedEventStoreOptions): Promise<ThreadedEventStore> {
    const worker = startWorker(options);
    const health = await new Promise<EventStoreHealth>((resolve, reject) => {
      const onMessage = (replies: WorkerReply[]) => {
        const first = replies[0];
        if (first && "ready" in first) resolve(first.health);
        else if (first && "failed" in first) reject(fromWire(first.failed));
        else return;
        worker.off("message", onMessage);
      };
      worker.on("message", onMessage);
      worker.once("error", (error) => reject(new PersysError("STORAGE_ERROR", `event store worker: ${error.message}`)));
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    return new ThreadedEventStore(worker, health);
  }

  append(stream: string, record: EventRecord, options?: EventAppendOptions): Promise<EventId> {
    return this.call("append", [stream, record, options]) as Promise<EventId>;
  }

  appendEach(streams: readonly string[], record: EventRecord, options?: EventAppendOptions): Promise<EventId[]> {
    return this.call("appendEach", [streams, record, options]) as Promise<EventId[]>;
  }

  read(stream: string, options?: EventReadOptions): Promise<StoredEvent[]> {
    return this.call("read", [stream, options]) as Promise<StoredEvent[]>;
  }

  async subscribe(streams: string | readonly string[], options?: EventSubscribeOptions): Promise<EventSubscription> {
    const a = subscribeArguments(streams, options);
    if (this.closed) throw closedError();
    const cursors = a.after ?? ((await this.call("lastIds", [a.streams])) as Map<string, EventIdParts>);
    return trackedSubscription(this.subscriptions, {
      cursors,
      signal: a.signal,
      fetch: (at, signal) => this.fetchAfter(a.streams, at, signal),
    });
  }

  incr(key: string, by?: number, options?: CounterOptions): Promise<number> {
    return this.call("incr", [key, by, options]) as Promise<number>;
  }

  getCounter(key: string): Promise<number> {
    return this.call("getCounter", [key]) as Promise<number>;
  }

  async addSample(series: string, timestampMs: number, value: number, options?: SeriesSampleOptions): Promise<void> {
    await this.call("addSample", [series, timestampMs, value, options]);
  }

  range(series: string, fromMs: number, toMs: number): Promise<SeriesSample[]> {
    return this.call("range", [series, fromMs, toMs]) as Promise<SeriesSample[]>;
  }

  health(): EventStoreHealth {
    return this.healthSignal.get();
  }

  onHealthChange(listener: (health: EventStoreHealth) => void): () => void {
    return this.healthSignal.listen(listener);
  }

  /** Ends every subscription, commits what is queued, closes the database and stops the worker. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.subscriptions].map((s) => s.close()));
      if (!this.closed && !this.lost) await this.call("close", []).catch(() => undefined);
      this.closed = true;
      for (const p of this.pending.values()) p.reject(closedError());
      this.pending.clear();
      await this.worker.terminate();
      if (!this.lost) this.setHealth({ state: "degraded", reason: "closed" });
    })();
    return this.closing;
  }

  /** A fetch for a subscription: resolves `[]` at once when `signal` aborts (and tells the worker). */
  private fetchAfter(
    streams: readonly string[],
    cursors: ReadonlyMap<string, EventIdParts>,
    signal: AbortSignal,
  ): Promise<StoredEvent[]> {
    if (signal.aborted || this.closed || this.lost) return Promise.resolve([]);
    const id = this.nextId;
    const fetched = this.call("fetchAfter", [streams, new Map(cursors)]) as Promise<StoredEvent[]>;
    const cancel = () => this.post({ cancel: id });
    signal.addEventListener("abort", cancel, { once: true });
    return untilAborted(fetched, signal)
      .then(
        (events) => events ?? [],
        (error: unknown) => {
          if (signal.aborted || this.closed) return [];
          throw error;
        },
      )
      .finally(() => signal.removeEventListener("abort", cancel));
  }

  private call(method: WorkerMethod, args: readonly unknown[]): Promise<unknown> {
    if (this.lost) return Promise.reject(this.lost);
    if (this.closed || (this.closing && method !== "close")) return Promise.reject(closedError());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Optional arguments left out: undefined survives cloning, but keep the messages small.
      while (args.length > 0 && args[args.length - 1] === undefined) args = args.slice(0, -1);
      this.post({ id, method, args });
    });
  }

  private post(request: WorkerRequest): void {
    this.outbox.push(request);
    if (this.outbox.length === 1) queueMicrotask(() => this.worker.postMessage(this.outbox.splice(0)));
  }

  private receive(reply: WorkerReply): void {
    if ("health" in reply && !("ready" in reply)) {
      this.setHealth(reply.health);
      return;
    }
    if (!("id" in reply)) return;
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if ("error" in reply) p.reject(fromWire(reply.error));
    else p.resolve(reply.result);
  }

  private setHealth(health: EventStoreHealth): void {
    if (health.state === "ok") this.healthSignal.ok();
    else this.healthSignal.degraded(health.reason);
  }
}

/**
 * The worker for these sources: the compiled `embedded-event-worker.js` beside this file, or, when
 * running from TypeScript sources (tests, `tsx`), the `.ts` file through tsx's loader.
 */
function startWorker(options: EmbeddedEventStoreOptions): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) return new Worker(new URL("./embedded-event-worker.js", here), { workerData: options });
  // tsx's ESM API (its package exports it for `import`; require.resolve would find the CJS twin).
  const tsx = join(dirname(createRequire(here).resolve("tsx/package.json")), "dist/esm/api/index.mjs");
  const target = new URL("./embedded-event-worker.ts", here).href;
  const code = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}); })`;
  return new Worker(code, { eval: true, workerData: options, execArgv: ["--conditions=development"] });
}
