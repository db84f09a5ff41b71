import { api, PersysError } from "@persys/schema";
import type { Logger } from "pino";
import type { ClusterState, StateChange } from "../cluster/cluster-state.js";
import type { EventRecorder } from "../cluster/event-recorder.js";
import type { ClusterKeys } from "../cluster/keys.js";
import { type ReplicaStatusRecord, reportOf, splitAgentRevision } from "../cluster/records.js";
import type { LeaderTerm } from "../leader/leader-election.js";
import type { SchedulingView } from "../scheduling/scheduling-view.js";
import { workloadsUsingSecret } from "../secrets/secret-references.js";
import type { SecretResolver } from "../secrets/secret-resolver.js";
import type { StateStore } from "../state/state-store.js";
import { TxnBatcher } from "../state/txn-batcher.js";
import type { AgentPool } from "./agent-pool.js";
import { NodeLifecycle } from "./node-lifecycle.js";
import { PushLimiter } from "./push-limiter.js";
import { StrayCollector } from "./stray-collector.js";
import { WorkQueue } from "./work-queue.js";
import { WorkloadReconciler } from "./workload-reconciler.js";

export interface ReconcilerOptions {
  readonly store: StateStore;
  readonly state: ClusterState;
  readonly keys: ClusterKeys;
  readonly view: SchedulingView;
  readonly events: EventRecorder;
  readonly pool: AgentPool;
  readonly term: LeaderTerm;
  /** After this long NotReady, a node's replicas are re-placed. */
  readonly lostAfterMs: number;
  /** Level-triggered safety net: every workload and node is reconciled this often. */
  readonly resyncMs?: number;
  /** Workload/node keys handled at once. */
  readonly concurrency?: number;
  /** Agent pushes in flight at once. */
  readonly pushConcurrency?: number;
  readonly logger?: Logger;
  /** Resolves secret values for pushes (none: workloads that use secrets fail with SECRET_NOT_FOUND). */
  readonly secrets?: SecretResolver;
  readonly clock?: () => number;
}

/** Everything the per-kind reconcilers share. */
export interface ReconcileContext extends ReconcilerOptions {
  readonly queue: WorkQueue;
  readonly batcher: TxnBatcher;
  /** Agent pushes run here, in the background, so reconciles never wait for agents. */
  readonly pushes: PushLimiter;
  readonly now: () => number;
  /** Whether this term still leads (false after deposition: stop acting). */
  readonly active: () => boolean;
}

/**
 * The leader's control loop: level-triggered and event-driven. A deduplicated, rate-limited work
 * queue of keys (`w:<workload>`, `n:<node>`, `s:<stray>`) is fed by the cluster state's change feed,
 * by scheduler snapshot changes (pending replicas are retried when a change could help them, not on a
 * timer) and by a periodic resync. Each key's handler compares desired and reported state and acts:
 * places, pushes to agents, stops, deletes and retries with typed reasons. Every write is fenced by
 * the leader term, so a deposed leader cannot assign anything.
 */
export class Reconciler {
  private readonly ctx: ReconcileContext;
  private readonly workloads: WorkloadReconciler;
  private readonly nodes: NodeLifecycle;
  private readonly strays: StrayCollector;
  private readonly unsubscribers: Array<() => void> = [];
  private resync: NodeJS.Timeout | undefined;
  private running = false;

  constructor(options: ReconcilerOptions) {
    const queue = new WorkQueue((key) => this.handle(key), {
      concurrency: options.concurrency ?? 32,
      baseDelayMs: 500,
      maxDelayMs: 60_000,
    });
    this.ctx = {
      ...options,
      queue,
      batcher: new TxnBatcher(options.store, () => options.term.fence),
      pushes: new PushLimiter(options.pushConcurrency ?? 256),
      now: options.clock ?? Date.now,
      active: () => this.running,
    };
    this.workloads = new WorkloadReconciler(this.ctx);
    this.nodes = new NodeLifecycle(this.ctx);
    this.strays = new StrayCollector(this.ctx);
  }

  get queueDepth(): number {
    return this.ctx.queue.depth;
  }

  /** Starts acting as leader: everything is reconciled once, then on change. */
  start(): void {
    this.running = true;
    const { state, view, queue } = this.ctx;
    this.unsubscribers.push(state.onChange((change) => this.onStateChange(change)));
    this.unsubscribers.push(
      view.onClusterChange((change) => {
        for (const pending of view.pending.retryCandidates(change)) queue.add(`w:${pending.workloadId}`);
      }),
    );
    this.enqueueAll();
    const resyncMs = this.ctx.resyncMs ?? 30_000;
    this.resync = setInterval(() => this.enqueueAll(), resyncMs);
    this.resync.unref?.();
    void this.ctx.events.record({
      type: "LeaderElected",
      message: `${this.ctx.term.leaderId} leads (term ${this.ctx.term.token})`,
    });
  }

  /** Stops acting (deposed or shutting down); in-flight handlers finish, nothing new starts. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.resync) clearInterval(this.resync);
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await this.ctx.queue.stop();
  }

  /** Resolves when no key is queued or being handled and no push is in flight (tests and benchmarks). */
  async idle(): Promise<void> {
    await this.ctx.queue.idle();
    await this.ctx.pushes.idle();
  }

  private enqueueAll(): void {
    const { state, queue } = this.ctx;
    for (const id of state.workloads.keys()) queue.add(`w:${id}`);
    for (const a of state.assignments.values())
      if (!state.workloads.has(a.value.workloadId)) queue.add(`w:${a.value.workloadId}`);
    for (const id of state.nodes.keys()) queue.add(`n:${id}`);
    for (const key of state.strays.keys()) queue.add(`s:${key}`);
  }

  private onStateChange(change: StateChange): void {
    const { key } = change;
    const queue = this.ctx.queue;
    switch (key.kind) {
      case "workload":
      case "assignment":
      case "pending":
        queue.add(`w:${key.workloadId}`);
        break;
      case "status":
        this.recordTransition(change);
        queue.add(`w:${key.workloadId}`);
        break;
      case "node":
      case "liveness":
        queue.add(`n:${key.nodeId}`);
        break;
      case "stray":
        if (change.type === "put") queue.add(`s:${key.nodeId}/${key.workloadId}/${key.index}`);
        break;
      case "secret":
        // A new version (or a secret appearing or going) rolls the replicas that use it.
        for (const id of workloadsUsingSecret(this.ctx.state, key.secretName!)) queue.add(`w:${id}`);
        break;
    }
  }

  /** Records an event when a reported replica state or reason changes (the leader records, once). */
  private recordTransition(change: StateChange): void {
    if (change.type !== "put") return;
    const current = reportOf(change.current as ReplicaStatusRecord);
    const previous = change.previous ? reportOf(change.previous as ReplicaStatusRecord) : undefined;
    const restarted = previous && current.restartCount > previous.restartCount;
    if (previous) this.recordReboot(change, previous, current);
    if (previous && previous.state === current.state && previous.reason?.code === current.reason?.code && !restarted)
      return;
    const failed = current.state === api.ReplicaState.REPLICA_STATE_FAILED;
    const state = api.replicaStateToJSON(current.state).replace("REPLICA_STATE_", "");
    const reason = current.reason?.message ? `: ${current.reason.message}` : "";
    void this.ctx.events.record({
      type: failed ? "ReplicaFailed" : "ReplicaStateChanged",
      severity: failed ? "warning" : "info",
      workloadId: current.workloadId,
      replicaIndex: current.replicaIndex,
      nodeId: (change.current as ReplicaStatusRecord).nodeId,
      message: restarted
        ? `replica ${current.replicaIndex} restarted by the runtime (restart ${current.restartCount})${reason}`
        : `replica ${current.replicaIndex} is ${state.toLowerCase()}${reason}`,
      ...(current.reason && current.reason.code !== api.ErrorCode.ERROR_CODE_UNSPECIFIED
        ? { code: api.errorCodeToJSON(current.reason.code) as never }
        : {}),
    });
  }

  /** A replica now reports a later reboot of the same runtime object: it was rebooted in place. */
  private recordReboot(change: StateChange, previous: api.ReplicaReport, current: api.ReplicaReport): void {
    const before = splitAgentRevision(previous.observedRevision);
    const after = splitAgentRevision(current.observedRevision);
    if (after.recreate !== before.recreate || after.reboots <= before.reboots) return;
    void this.ctx.events.record({
      type: "ReplicaRebooted",
      workloadId: current.workloadId,
      replicaIndex: current.replicaIndex,
      nodeId: (change.current as ReplicaStatusRecord).nodeId,
      message: `replica ${current.replicaIndex} rebooted in place (reboot ${after.reboots}, same runtime object)`,
      attributes: { revision: current.observedRevision, runtimeId: current.runtimeId },
    });
  }

  private async handle(key: string): Promise<void> {
    if (!this.running) return;
    const colon = key.indexOf(":");
    const kind = key.slice(0, colon);
    const id = key.slice(colon + 1);
    try {
      if (kind === "w") await this.workloads.reconcile(id);
      else if (kind === "n") await this.nodes.reconcile(id);
      else if (kind === "s") await this.strays.reconcile(id);
      this.ctx.queue.forget(key);
    } catch (error) {
      if (!this.running) return;
      const delay = this.ctx.queue.addRateLimited(key);
      this.ctx.logger?.warn(
        { key, err: error instanceof PersysError ? error.toBody() : String(error), retryInMs: delay },
        "reconcile failed; retrying",
      );
    }
  }
}
