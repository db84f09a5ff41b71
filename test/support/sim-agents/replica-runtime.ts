/**
 * The in-memory "container runtime" of a simulated node: replicas move STARTING → RUNNING on timers,
 * fail when a failure was injected, crash and restart by their restart policy, and are fenced by
 * assignment generation. No gRPC here; `node-agent.ts` puts the wire around it.
 */
import { type ErrorCode, errorRegistry } from "@persys/schema";
import { type ParsedAssignment, type RestartRule, replicaKey, type SimPort } from "./assignment.js";
import type { SimResources, SimWorkloadKind } from "./node-description.js";

/** Lifecycle states a simulated replica goes through (a subset of `api.ReplicaState`). */
export type ReplicaStateName = "STARTING" | "RUNNING" | "STOPPED" | "FAILED";

/** Why a replica is in its state. */
export interface SimReason {
  readonly code: ErrorCode;
  readonly message: string;
  readonly retryable: boolean;
  /** When the agent itself will try again (a crash with a restart pending). */
  readonly nextRetryAt?: Date | undefined;
  readonly since: Date;
}

/** One replica as the simulated node runs it. Snapshots: a change replaces the object. */
export interface SimReplica {
  /** The id the control plane used in ApplyWorkload (Go status and Delete/GetWorkloadStatus use it). */
  readonly agentId: string;
  readonly workloadId: string;
  readonly index: number;
  readonly kind: SimWorkloadKind;
  readonly revision: string;
  readonly generation: number;
  readonly desired: "running" | "stopped";
  readonly state: ReplicaStateName;
  readonly reason?: SimReason | undefined;
  readonly restartCount: number;
  readonly startedAt?: Date | undefined;
  readonly lastTransitionAt: Date;
  readonly createdAt: Date;
  /** What the replica reserves (from the assignment). */
  readonly resources: SimResources;
  readonly ports: readonly SimPort[];
  readonly restart: RestartRule;
  readonly image: string;
  /** A fake runtime object id, new on every full (re)create. */
  readonly runtimeId: string;
}

/** A replica removed by DeleteWorkload, kept for fencing assertions. */
export interface DeletedReplica {
  readonly agentId: string;
  readonly workloadId: string;
  readonly index: number;
  readonly generation: number;
  readonly revision: string;
  /** Its state when it was deleted. */
  readonly state: ReplicaStateName;
  readonly at: Date;
}

/** A failure to inject into the next matching apply. */
export interface InjectedFailure {
  /** The replica's reason code, e.g. `IMAGE_NOT_FOUND` or `PORT_CONFLICT`. */
  readonly code: ErrorCode;
  /** Default: the error registry's summary of the code. */
  readonly message?: string;
  /** Default: the error registry's `retryable` for the code. */
  readonly retryable?: boolean;
  /** How many matching applies fail. Default 1; `Infinity` for every one. */
  readonly times?: number;
  /**
   * `start` (default): the apply is accepted (STARTING) and the replica turns FAILED after the start
   * delay, as with an image pull failing. `apply`: the apply itself answers `applied=false`.
   */
  readonly at?: "start" | "apply";
}

/** Which applies a failure hits: a workload id (or agent id), or a predicate on the assignment. */
export type ApplyMatcher = string | ((assignment: ParsedAssignment) => boolean);

/** What an apply did. */
export interface ApplyOutcome {
  readonly applied: boolean;
  readonly skipped: boolean;
  readonly message: string;
  readonly replica?: SimReplica | undefined;
}

/** A change the runtime reports to its node. */
export type RuntimeEvent = { type: "replica"; replica: SimReplica } | { type: "deleted"; deleted: DeletedReplica };

/** Timing knobs of the runtime. */
export interface RuntimeTiming {
  /** STARTING → RUNNING (or → FAILED for an injected failure). */
  readonly startDelayMs: number;
  /** FAILED after a crash → RUNNING again, when the restart policy restarts. */
  readonly restartDelayMs: number;
}

interface Slot {
  replica: SimReplica;
  timer?: NodeJS.Timeout | undefined;
}

interface ArmedFailure {
  readonly matcher: ApplyMatcher;
  readonly failure: InjectedFailure;
  remaining: number;
}

let runtimeIds = 0;

/** The simulated runtime of one node. */
export class ReplicaRuntime {
  private readonly slots = new Map<string, Slot>();
  private readonly armed: ArmedFailure[] = [];

  constructor(
    private readonly timing: RuntimeTiming,
    private readonly onEvent: (event: RuntimeEvent) => void,
  ) {}

  /**
   * Converges one replica on the assignment. Idempotent by revision: the same revision in the same
   * desired state is `skipped` (a FAILED replica is re-created instead, as the Go agent does); a
   * desired-state change starts or stops without re-creating; a new revision re-creates. An
   * assignment (Persys extension) whose generation is lower than the one the node holds is refused
   * (fencing); Go requests carry no generation and are never refused for it.
   */
  apply(input: ParsedAssignment): ApplyOutcome {
    const key = replicaKey(input.workloadId, input.index);
    const slot = this.slots.get(key);
    const cur = slot?.replica;
    if (!input.hasSpec && !cur) {
      return { applied: false, skipped: false, message: "invalid request: spec is required for a new workload" };
    }
    const a: ParsedAssignment =
      !input.hasSpec && cur
        ? {
            ...input,
            kind: cur.kind,
            resources: cur.resources,
            ports: cur.ports,
            restart: cur.restart,
            image: cur.image,
            revision: cur.revision,
          }
        : input;
    if (cur && a.extension && a.generation < cur.generation) {
      return {
        applied: false,
        skipped: false,
        message: `stale assignment: generation ${a.generation} is older than ${cur.generation} held by this node`,
        replica: cur,
      };
    }
    if (cur && cur.revision === a.revision && cur.state !== "FAILED") {
      // A Go request (no extension) carries no generation: the one held stays.
      const base: SimReplica = { ...cur, generation: a.extension ? a.generation : cur.generation, agentId: a.agentId };
      if (a.desired === cur.desired) {
        if (base.generation !== cur.generation) this.set(key, base);
        else slot!.replica = base;
        return {
          applied: true,
          skipped: true,
          message: `already ${cur.state.toLowerCase()} at revision ${cur.revision}`,
          replica: base,
        };
      }
      this.clearTimer(key);
      if (a.desired === "stopped") {
        const stopped = this.set(key, {
          ...base,
          desired: "stopped",
          state: "STOPPED",
          reason: undefined,
          startedAt: undefined,
        });
        return { applied: true, skipped: false, message: "stopped", replica: stopped };
      }
      return this.start(key, { ...base, desired: "running" }, a);
    }
    this.clearTimer(key);
    const now = new Date();
    const fresh: SimReplica = {
      agentId: a.agentId,
      workloadId: a.workloadId,
      index: a.index,
      kind: a.kind,
      revision: a.revision,
      generation: a.generation,
      desired: a.desired,
      state: "STOPPED",
      restartCount: 0,
      lastTransitionAt: now,
      createdAt: now,
      resources: a.resources,
      ports: a.ports,
      restart: a.restart,
      image: a.image,
      runtimeId: `sim-${(++runtimeIds).toString(16).padStart(12, "0")}`,
    };
    if (a.desired === "stopped") {
      return { applied: true, skipped: false, message: "created, stopped", replica: this.set(key, fresh) };
    }
    return this.start(key, fresh, a);
  }

  /**
   * Removes the replicas known by `id`: the agent id of an apply, or else every replica of the
   * workload with that id. Removing nothing is not an error. Returns what was removed.
   */
  delete(id: string): DeletedReplica[] {
    let keys = [...this.slots].filter(([, s]) => s.replica.agentId === id).map(([k]) => k);
    if (keys.length === 0) keys = [...this.slots].filter(([, s]) => s.replica.workloadId === id).map(([k]) => k);
    const at = new Date();
    return keys.map((key) => {
      const r = this.slots.get(key)!.replica;
      this.clearTimer(key);
      this.slots.delete(key);
      const deleted: DeletedReplica = {
        agentId: r.agentId,
        workloadId: r.workloadId,
        index: r.index,
        generation: r.generation,
        revision: r.revision,
        state: r.state,
        at,
      };
      this.onEvent({ type: "deleted", deleted });
      return deleted;
    });
  }

  /**
   * Crashes a RUNNING replica: FAILED (`CONTAINER_EXITED` "exited with code N", `VM_CRASHED` for a
   * VM), then, when its restart policy restarts it, RUNNING again after the restart delay with
   * `restartCount + 1`. Throws when the replica is not running.
   */
  crash(workloadId: string, index = 0, options: { exitCode?: number; restartDelayMs?: number } = {}): SimReplica {
    const key = replicaKey(workloadId, index);
    const cur = this.slots.get(key)?.replica;
    if (cur?.state !== "RUNNING") {
      throw new Error(`replica ${key} is ${cur ? cur.state : "not on this node"}; only a RUNNING replica can crash`);
    }
    const { policy, maxRetries } = cur.restart;
    const restarts =
      policy === "always" ||
      policy === "unless-stopped" ||
      (policy === "on-failure" && (maxRetries === 0 || cur.restartCount < maxRetries));
    const delay = options.restartDelayMs ?? this.timing.restartDelayMs;
    const now = new Date();
    this.clearTimer(key);
    const failed = this.set(key, {
      ...cur,
      state: "FAILED",
      startedAt: undefined,
      reason: {
        code: cur.kind === "vm" ? "VM_CRASHED" : "CONTAINER_EXITED",
        message: cur.kind === "vm" ? "the domain crashed" : `exited with code ${options.exitCode ?? 137}`,
        retryable: restarts,
        nextRetryAt: restarts ? new Date(now.getTime() + delay) : undefined,
        since: now,
      },
    });
    if (restarts) {
      this.schedule(key, delay, (r) => ({
        ...r,
        state: "RUNNING",
        reason: undefined,
        startedAt: new Date(),
        restartCount: r.restartCount + 1,
      }));
    }
    return failed;
  }

  /** Arms a failure for the next apply (or `times` applies) that matches and starts a replica. */
  failNextApply(matcher: ApplyMatcher, failure: InjectedFailure): void {
    this.armed.push({ matcher, failure, remaining: failure.times ?? 1 });
  }

  /** The replica the id names: by agent id, else the lowest index of the workload with that id. */
  find(id: string): SimReplica | undefined {
    let best: SimReplica | undefined;
    for (const { replica } of this.slots.values()) {
      if (replica.agentId === id) return replica;
      if (replica.workloadId === id && (best === undefined || replica.index < best.index)) best = replica;
    }
    return best;
  }

  /** One replica by workload id and index. */
  get(workloadId: string, index = 0): SimReplica | undefined {
    return this.slots.get(replicaKey(workloadId, index))?.replica;
  }

  /** Every replica on the node, in insertion order. */
  replicas(): SimReplica[] {
    return [...this.slots.values()].map((s) => s.replica);
  }

  /** Number of replicas on the node. */
  get size(): number {
    return this.slots.size;
  }

  /** Cancels every pending transition (the replicas stay as they are). */
  dispose(): void {
    for (const key of this.slots.keys()) this.clearTimer(key);
  }

  private start(key: string, base: SimReplica, a: ParsedAssignment): ApplyOutcome {
    const failure = this.takeFailure(a);
    if (failure?.at === "apply") {
      const failed = this.set(key, { ...base, state: "FAILED", startedAt: undefined, reason: reasonOf(failure) });
      return { applied: false, skipped: false, message: failed.reason!.message, replica: failed };
    }
    const starting = this.set(key, { ...base, state: "STARTING", reason: undefined, startedAt: undefined });
    this.schedule(key, this.timing.startDelayMs, (r) =>
      failure
        ? { ...r, state: "FAILED", reason: reasonOf(failure) }
        : { ...r, state: "RUNNING", reason: undefined, startedAt: new Date() },
    );
    return { applied: true, skipped: false, message: "starting", replica: starting };
  }

  private takeFailure(a: ParsedAssignment): InjectedFailure | undefined {
    const i = this.armed.findIndex(({ matcher }) =>
      typeof matcher === "string" ? matcher === a.workloadId || matcher === a.agentId : matcher(a),
    );
    const entry = this.armed[i];
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.armed.splice(i, 1);
    return entry.failure;
  }

  private set(key: string, next: SimReplica): SimReplica {
    const slot = this.slots.get(key);
    const replica = slot?.replica.state === next.state ? next : { ...next, lastTransitionAt: new Date() };
    if (slot) slot.replica = replica;
    else this.slots.set(key, { replica });
    this.onEvent({ type: "replica", replica });
    return replica;
  }

  private schedule(key: string, delayMs: number, next: (r: SimReplica) => SimReplica): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      const current = this.slots.get(key);
      if (current !== slot) return;
      slot.timer = undefined;
      this.set(key, next(slot.replica));
    }, delayMs);
    slot.timer.unref();
  }

  private clearTimer(key: string): void {
    const slot = this.slots.get(key);
    if (slot?.timer) {
      clearTimeout(slot.timer);
      slot.timer = undefined;
    }
  }
}

function reasonOf(f: InjectedFailure): SimReason {
  return {
    code: f.code,
    message: f.message ?? errorRegistry[f.code].summary,
    retryable: f.retryable ?? errorRegistry[f.code].retryable,
    since: new Date(),
  };
}
