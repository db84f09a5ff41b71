import type { StateStore } from "../state/state-store.js";
import type { ClusterState } from "./cluster-state.js";

/**
 * Linearizable reads from the cluster state cache, as Kubernetes' consistent reads from the watch
 * cache do: read the store's current revision (one linearizable round trip), wait until the cache has
 * applied it, then read the cache. Whatever was acknowledged before `sync()` was called is visible
 * after it resolves, whichever server acknowledged it.
 *
 * Concurrent callers share rounds: a caller joins the round that has not started yet (started only
 * after the caller arrived, so it still sees every earlier write), and at most one round is in
 * flight. A burst of N requests costs one or two store reads instead of N.
 */
export class ConsistentReads {
  private inFlight: Promise<number> | undefined;
  private next: Promise<number> | undefined;

  constructor(
    private readonly store: Pick<StateStore, "currentRevision">,
    private readonly state: Pick<ClusterState, "waitFor">,
  ) {}

  /** Resolves once the cache is at least as new as the store was when this was called. */
  async sync(): Promise<void> {
    this.next ??= this.startRound();
    await this.state.waitFor(await this.next);
  }

  private async startRound(): Promise<number> {
    // Runs synchronously up to here, so `next` is set before anyone else calls sync().
    await this.inFlight?.catch(() => undefined);
    this.next = undefined; // callers from now on need a round that starts after them
    const round = this.store.currentRevision();
    this.inFlight = round;
    return round;
  }
}
