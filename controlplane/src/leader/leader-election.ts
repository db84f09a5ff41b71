import type { PersysError } from "@persys/schema";
import type { Compare, StateStore } from "../state/state-store.js";
import { decodeJson, encodeJson } from "../state/value-codec.js";

/** What a leader holds: its fencing token guards every write it makes as leader. */
export interface LeaderTerm {
  /** The leader key's createRevision: unique per term and only growing. */
  readonly token: number;
  readonly leaderId: string;
  /** A compare to add to every leader-only transaction: it fails once this term has ended. */
  readonly fence: Compare;
}

export interface LeaderElectionOptions {
  /** The election key, e.g. `/persys/leader`. */
  readonly key: string;
  /** This candidate's identity (shown as the cluster's leader). */
  readonly id: string;
  /** Lease TTL in seconds: a dead leader is replaced within about this long. */
  readonly ttlSeconds: number;
  readonly onElected: (term: LeaderTerm) => void;
  readonly onDeposed: (term: LeaderTerm, reason: string) => void;
  /** Called with errors that made the campaign retry (for logging). */
  readonly onRetry?: (error: unknown) => void;
}

interface LeaderValue {
  id: string;
  since: string;
}

/**
 * Leader election on a StateStore, the algorithm of etcd's `concurrency.Election` on the same
 * primitives: a candidate holds a lease, creates the election key with it only if the key is absent
 * (a compare on version 0), and otherwise watches the key until it is deleted. The leader's lease is
 * kept alive; when renewal fails the leader steps down, before its lease can have expired for others.
 * Works on etcd (production) and the embedded store alike.
 */
export class LeaderElection {
  private term: LeaderTerm | undefined;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly options: LeaderElectionOptions,
  ) {}

  get isLeader(): boolean {
    return this.term !== undefined;
  }

  get currentTerm(): LeaderTerm | undefined {
    return this.term;
  }

  /** The current leader's id as stored, or undefined when there is none. */
  async leaderId(): Promise<string | undefined> {
    const kv = await this.store.get(this.options.key);
    return kv ? decodeJson<LeaderValue>(kv.value).id : undefined;
  }

  /** Starts campaigning in the background (once). */
  start(): void {
    this.loop ??= this.campaignLoop();
  }

  /** Stops campaigning; a leader resigns (its key is deleted at once, so a successor need not wait). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async campaignLoop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.campaignOnce();
      } catch (error) {
        if (this.abort.signal.aborted) break;
        this.options.onRetry?.(error);
        await delay(500, this.abort.signal);
      }
    }
  }

  /** One lease's life: wait for the key to be free, lead until the lease or the key is lost. */
  private async campaignOnce(): Promise<void> {
    const grant = await this.store.grantLease(this.options.ttlSeconds);
    const keepAlive = this.store.keepAlive(grant.id);
    const lost = keepAlive.ended.then((error) => `lease lost: ${error?.message ?? "keep-alive stopped"}`);
    const stop = abortPromise(this.abort.signal);
    const stopped = stop.promise;
    try {
      while (!this.abort.signal.aborted) {
        const value = encodeJson({ id: this.options.id, since: new Date().toISOString() } satisfies LeaderValue);
        const result = await this.store.txn({
          compare: [{ key: this.options.key, target: "version", op: "=", value: 0 }],
          success: [{ type: "put", key: this.options.key, value, lease: grant.id }],
          failure: [{ type: "get", key: this.options.key }],
        });
        if (result.succeeded) {
          const term: LeaderTerm = {
            token: result.revision,
            leaderId: this.options.id,
            fence: { key: this.options.key, target: "createRevision", op: "=", value: result.revision },
          };
          this.term = term;
          this.options.onElected(term);
          const reason = await Promise.race([lost, this.untilKeyChanges(result.revision), stopped]);
          this.term = undefined;
          this.options.onDeposed(term, reason);
          return;
        }
        const existing = result.results[0];
        const seen = existing?.type === "get" && existing.kv ? existing.kv.modRevision : result.revision;
        const reason = await Promise.race([lost, this.untilKeyChanges(seen), stopped]);
        if (reason.startsWith("lease lost")) return;
      }
    } finally {
      stop.dispose();
      keepAlive.stop();
      await this.store.revokeLease(grant.id).catch(() => {});
    }
  }

  /** Resolves with a reason once the election key changes after revision `seen` (or the watch fails). */
  private async untilKeyChanges(seen: number): Promise<string> {
    let resolveChange: (reason: string) => void = () => {};
    const changed = new Promise<string>((resolve) => {
      resolveChange = resolve;
    });
    const watch = await this.store.watch(this.options.key, {
      afterRevision: seen,
      onEvents: (batch) => {
        const event = batch.events.find((e) => e.key === this.options.key);
        if (event) resolveChange(event.type === "delete" ? "leader key deleted" : "leader key replaced");
      },
      onError: (error: PersysError) => resolveChange(`watch failed: ${error.message}`),
    });
    const stop = abortPromise(this.abort.signal);
    try {
      return await Promise.race([changed, stop.promise]);
    } finally {
      stop.dispose();
      await watch.cancel();
    }
  }
}

/** Resolves with "stopped" when the signal aborts; `dispose` removes its listener (no leak per wait). */
function abortPromise(signal: AbortSignal): { promise: Promise<string>; dispose: () => void } {
  let onAbort = () => {};
  const promise = new Promise<string>((resolve) => {
    onAbort = () => resolve("stopped");
    if (signal.aborted) resolve("stopped");
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
