import { agent, type control, PersysError } from "@persys/schema";
import type Docker from "dockerode";
import type { Logger } from "pino";
import type { AgentMetrics, ReplicaSample } from "../metrics/agent-metrics.js";
import type { ReplicaStateName } from "../runtimes/docker/container-state.js";
import type { ReplicaStore } from "../state/replica-store.js";
import type { ActionLog } from "./action-log.js";
import { type DesiredReplica, desiredReplicaFromRequest, isRebootOnly } from "./desired-replica.js";
import type {
  ObservedReplicaReason,
  ReplicaDriver,
  ReplicaDriverContext,
  ReplicaDriverFactory,
  ReplicaKind,
} from "./replica-driver.js";
import { ReplicaEntry } from "./replica-entry.js";
import { type ReplicaSecretValues, secretRefsOf, secretValuesOf } from "./replica-secrets.js";
import { agentWorkloadStatus, goUsage, goWorkloadStatus, type ReplicaIdentity, replicaReport } from "./replica-wire.js";

export interface ReplicaManagerOptions {
  readonly nodeId: string;
  readonly store: ReplicaStore;
  readonly actions: ActionLog;
  readonly logger: Logger;
  /** Host address reported for ports published on every address. */
  readonly nodeAddress: string;
  /** One driver per workload kind this node runs; a kind without one is refused (RUNTIME_UNAVAILABLE). */
  readonly drivers: readonly ReplicaDriverFactory[];
  /** A replica's reported state changed: report soon. */
  readonly onChange: () => void;
  readonly metrics?: AgentMetrics | undefined;
  readonly clock?: () => number;
}

const key = (workloadId: string, index: number) => `${workloadId}#${index}`;

function meets(state: string, desired: DesiredReplica["desired"]): boolean {
  return desired === "running" ? state === "RUNNING" : desired === "stopped" ? state === "STOPPED" : false;
}

/**
 * The replicas of this node: desired state durably in the store, observed state from the runtime
 * driver of each replica's kind (container, vm, ...). Apply validates the request and records the desired replica before answering; the runtime work
 * then runs on the replica's own queue and its outcome is reported through heartbeats (`onChange`
 * asks for one at every change). Idempotent by revision: the same revision and state is a no-op, a
 * desired-state change only starts or stops, a new revision (or re-applying a failed replica)
 * recreates the runtime object, and a revision that only asks for another reboot (`+b<n>`, see
 * `isRebootOnly`) reboots it in place through the driver's `reboot`. On start it adopts the runtime objects already running for stored
 * replicas.
 */
export class ReplicaManager {
  private readonly entries = new Map<string, ReplicaEntry>();
  private readonly byReplica = new Map<string, string>();
  private readonly drivers = new Map<ReplicaKind, ReplicaDriver>();
  private readonly clock: () => number;

  constructor(private readonly o: ReplicaManagerOptions) {
    this.clock = o.clock ?? Date.now;
    const ctx: ReplicaDriverContext = {
      nodeId: o.nodeId,
      store: o.store,
      actions: o.actions,
      logger: o.logger,
      metrics: o.metrics,
      clock: this.clock,
      set: (e, state, reason) => this.set(e, state, reason),
      gone: (e) => this.forget(e),
      find: (workloadId, index) => {
        const id = this.byReplica.get(key(workloadId, index));
        return id ? this.entries.get(id) : undefined;
      },
      enqueue: (e, work) => {
        void e.enqueue(work, (error) => this.onError(e, error));
      },
    };
    for (const factory of o.drivers) {
      const driver = factory(ctx);
      this.drivers.set(driver.kind, driver);
    }
  }

  /** The workload kinds this node has a driver for. */
  get kinds(): ReplicaKind[] {
    return [...this.drivers.keys()];
  }

  /** Records a state and reason; reports when anything the control plane reads changed. */
  private set(e: ReplicaEntry, state: ReplicaStateName, reason?: ObservedReplicaReason): void {
    const o = e.observed;
    if (o.state !== state) o.lastTransitionAt = new Date(this.clock());
    o.state = state;
    if (reason) o.reason = reason;
    else delete o.reason;
    const fingerprint = JSON.stringify([
      state,
      reason?.code,
      reason?.message,
      o.observedRevision,
      o.restartCount,
      o.containerId,
      o.ports,
      o.vm,
    ]);
    if (fingerprint !== e.reported) {
      e.reported = fingerprint;
      this.o.onChange();
    }
  }

  /**
   * Loads the stored replicas and adopts their runtime objects (no recreate at the same revision).
   * A stored replica of a kind this node has no driver for (its runtime was disabled) stays FAILED
   * with RUNTIME_UNAVAILABLE until it is deleted or the runtime comes back.
   */
  start(): void {
    for (const stored of this.o.store.all()) {
      const e = new ReplicaEntry(stored.replica, new Date(this.clock()), stored.agentRestarts);
      if (stored.replica.desired === "deleted") e.observed.state = "DELETING";
      this.track(e);
    }
    this.resync();
  }

  /**
   * Re-reads the replicas (of one kind, or all) from their runtime and converges them in adopt mode
   * (after a runtime reconnect).
   */
  resync(kind?: ReplicaKind): void {
    for (const e of this.entries.values()) {
      if (kind !== undefined && e.desired.kind !== kind) continue;
      if (e.busy && e.desired.desired !== "deleted") continue;
      const driver = this.drivers.get(e.desired.kind);
      if (!driver) {
        this.set(e, e.desired.desired === "deleted" ? "DELETING" : "FAILED", this.noDriver(e.desired));
        continue;
      }
      void e.enqueue(
        () => driver.converge(e, "adopt"),
        (error) => this.onError(e, error),
      );
    }
  }

  private noDriver(d: Pick<DesiredReplica, "id" | "kind">): ObservedReplicaReason {
    return {
      code: "RUNTIME_UNAVAILABLE",
      message: `this node has no ${d.kind} runtime enabled (replica ${d.id}); it runs ${this.kinds.join(", ") || "no workloads"}`,
      retryable: false,
    };
  }

  private track(e: ReplicaEntry): void {
    this.entries.set(e.desired.id, e);
    this.byReplica.set(key(e.desired.workloadId, e.desired.index), e.desired.id);
  }

  private forget(e: ReplicaEntry): void {
    if (this.entries.get(e.desired.id) !== e) return;
    this.entries.delete(e.desired.id);
    this.byReplica.delete(key(e.desired.workloadId, e.desired.index));
    this.o.onChange();
  }

  private onError(e: ReplicaEntry, error: unknown): void {
    this.o.logger.error({ replica: e.desired.id, err: String(error) }, "replica work failed unexpectedly");
  }

  /** ApplyWorkload: validate, record durably, start the runtime work, answer with the current status. */
  apply(request: agent.ApplyWorkloadRequest): agent.ApplyWorkloadResponse {
    let d: DesiredReplica;
    let secrets: ReplicaSecretValues | undefined;
    try {
      d = desiredReplicaFromRequest(request);
      secrets = secretValuesOf(request, secretRefsOf(d));
    } catch (error) {
      return this.rejected(request, error, "invalid request");
    }
    const driver = this.drivers.get(d.kind);
    if (!driver) {
      const r = this.noDriver(d);
      return this.rejected(request, new PersysError(r.code, r.message, { retryable: false }), "runtime unavailable");
    }
    const notReady = driver.notReady();
    if (notReady) {
      return this.rejected(request, new PersysError("RUNTIME_UNAVAILABLE", notReady.message), "runtime unavailable");
    }
    const existing = this.entries.get(d.id);
    // Secret values stay in memory (never in the store): the latest request's are the ones to use.
    if (existing) existing.secrets = secrets;
    if (existing && !existing.recreate && existing.observed.state !== "FAILED" && isRebootOnly(existing.desired, d)) {
      if (driver.reboot) return this.reboot(request, existing, d, driver);
      existing.recreate = true; // this kind cannot reboot in place: recreate it
    }
    if (existing && existing.desired.desired !== "deleted" && existing.desired.revision === d.revision) {
      const same = existing.desired.desired === d.desired;
      const converging =
        existing.busy && (existing.observed.state === "STARTING" || existing.observed.state === "STOPPING");
      if (same && !existing.recreate && (meets(existing.observed.state, d.desired) || converging)) {
        if (existing.desired.generation !== d.generation) this.persist(existing, d);
        this.o.metrics?.applies.inc({ result: "skipped" });
        return {
          applied: true,
          skipped: meets(existing.observed.state, d.desired),
          message: `revision ${d.revision} is already ${converging ? "being applied" : d.desired}`,
          status: this.statusOf(existing),
        };
      }
      if (existing.observed.state === "FAILED") existing.recreate = true;
    }
    // A replica being deleted keeps its entry: the new converge queues behind the teardown.
    const entry = existing ?? new ReplicaEntry(d, new Date(this.clock()));
    entry.secrets = secrets;
    try {
      this.persist(entry, d);
    } catch (error) {
      return this.rejected(request, error, "cannot record the replica");
    }
    if (!existing) {
      entry.fresh = true;
      this.track(entry);
    }
    entry.appliedAt = this.clock();
    entry.cancelRestart();
    if (entry.observed.observedRevision !== d.revision) entry.observed.observedRevision = d.revision;
    this.set(entry, d.desired === "stopped" ? "STOPPING" : "STARTING");
    this.o.metrics?.applies.inc({ result: "applied" });
    void entry.enqueue(
      () => driver.converge(entry, "apply"),
      (error) => this.onError(entry, error),
    );
    return {
      applied: true,
      skipped: false,
      message: `applying revision ${d.revision} (${d.desired})`,
      status: this.statusOf(entry),
    };
  }

  /** An apply that only asks for an in-place reboot: recorded, then the driver reboots on the queue. */
  private reboot(
    request: agent.ApplyWorkloadRequest,
    entry: ReplicaEntry,
    d: DesiredReplica,
    driver: ReplicaDriver,
  ): agent.ApplyWorkloadResponse {
    try {
      this.persist(entry, d);
    } catch (error) {
      return this.rejected(request, error, "cannot record the replica");
    }
    entry.appliedAt = this.clock();
    entry.cancelRestart();
    this.o.metrics?.applies.inc({ result: "applied" });
    void entry.enqueue(
      () => driver.reboot!(entry),
      (error) => this.onError(entry, error),
    );
    return {
      applied: true,
      skipped: false,
      message: `rebooting replica ${d.id} in place (revision ${d.revision})`,
      status: this.statusOf(entry),
    };
  }

  private persist(entry: ReplicaEntry, d: DesiredReplica): void {
    this.o.store.put(d, this.clock());
    entry.desired = d;
  }

  private rejected(request: agent.ApplyWorkloadRequest, error: unknown, what: string): agent.ApplyWorkloadResponse {
    const e = error instanceof PersysError ? error : new PersysError("INTERNAL", String(error));
    this.o.metrics?.applies.inc({ result: "rejected" });
    const now = new Date(this.clock());
    const d: ReplicaIdentity = {
      id: request.id,
      workloadId: request.persys?.workload?.id ?? request.id,
      index: request.persys?.replicaIndex ?? 0,
      generation: request.persys?.generation ?? 0,
      revision: request.persys?.revision || request.revisionId,
      desired: request.desiredState === agent.DesiredState.DESIRED_STATE_STOPPED ? "stopped" : "running",
    };
    const observed = {
      state: "FAILED" as const,
      reason: { code: e.code, message: e.message, retryable: e.retryable },
      observedRevision: d.revision,
      restartCount: 0,
      lastTransitionAt: now,
      ports: [],
      cpuMillicores: 0,
      memoryBytes: 0,
      createdAt: now,
    };
    return {
      applied: false,
      skipped: false,
      message: `${what}: ${e.message}`,
      status: agentWorkloadStatus(d, observed, this.o.nodeAddress),
    };
  }

  /** DeleteWorkload: marks the replica (or every replica of a Go workload id) deleted; removal is async. */
  delete(id: string): agent.DeleteWorkloadResponse {
    const targets = this.entries.has(id)
      ? [this.entries.get(id)!]
      : [...this.entries.values()].filter((e) => e.desired.workloadId === id);
    if (targets.length === 0) return { success: true, message: `${id} is not on this node` };
    for (const e of targets) {
      if (e.desired.desired === "deleted") continue;
      const d: DesiredReplica = { ...e.desired, desired: "deleted" };
      try {
        this.persist(e, d);
      } catch (error) {
        return { success: false, message: `cannot record the deletion: ${(error as Error).message}` };
      }
      e.cancelRestart();
      this.set(e, "DELETING");
      const driver = this.drivers.get(e.desired.kind);
      void e.enqueue(
        async () => {
          if (driver) return driver.teardown(e);
          // No runtime for it here (disabled): nothing this agent could remove.
          this.o.store.delete(e.desired.id);
          this.forget(e);
        },
        (error) => this.onError(e, error),
      );
    }
    return { success: true, message: `deleting ${targets.map((e) => e.desired.id).join(", ")}` };
  }

  /** The agent WorkloadStatus of a replica by id (or the lowest replica of a workload id). */
  status(id: string): agent.WorkloadStatus | undefined {
    const e =
      this.entries.get(id) ??
      [...this.entries.values()]
        .filter((x) => x.desired.workloadId === id)
        .sort((a, b) => a.desired.index - b.desired.index)[0];
    return e ? this.statusOf(e) : undefined;
  }

  list(): agent.WorkloadStatus[] {
    return [...this.entries.values()].map((e) => this.statusOf(e));
  }

  private statusOf(e: ReplicaEntry): agent.WorkloadStatus {
    return agentWorkloadStatus(e.desired, e.observed, this.o.nodeAddress);
  }

  /** What a heartbeat carries about replicas (Go statuses and usage, Persys reports). */
  heartbeat(): {
    statuses: control.WorkloadStatus[];
    usage: control.WorkloadUsageSnapshot[];
    reports: ReturnType<typeof replicaReport>[];
  } {
    const all = [...this.entries.values()];
    return {
      statuses: all.map((e) => goWorkloadStatus(e.desired, e.observed)),
      usage: all.filter((e) => e.observed.state === "RUNNING").map((e) => goUsage(e.desired, e.observed)),
      reports: all.map((e) => replicaReport(e.desired, e.observed, this.o.nodeAddress)),
    };
  }

  /** Reservations of replicas that hold resources (not stopped or failed). */
  allocated(): { cpuMillicores: number; memoryMib: number; diskGib: number } {
    const total = { cpuMillicores: 0, memoryMib: 0, diskGib: 0 };
    for (const e of this.entries.values()) {
      if (e.desired.desired !== "running" || e.observed.state === "FAILED") continue;
      total.cpuMillicores += e.desired.resources.cpuMillicores;
      total.memoryMib += e.desired.resources.memoryMib;
      total.diskGib += e.desired.resources.diskGib;
    }
    return total;
  }

  /** Running replicas with their container ids (for the usage sampler). */
  running(): { entry: ReplicaEntry; containerId: string }[] {
    return [...this.entries.values()]
      .filter((e) => e.observed.state === "RUNNING" && e.observed.containerId)
      .map((entry) => ({ entry, containerId: entry.observed.containerId! }));
  }

  /** The container id of a replica by its request id (log streaming). */
  containerOf(id: string): string | undefined {
    return this.entries.get(id)?.observed.containerId;
  }

  /** Whether a Persys-labelled container of this node belongs to a desired replica. */
  owns(container: Docker.ContainerInfo): boolean {
    const workload = container.Labels["persys.workload"];
    const index = Number(container.Labels["persys.replica"]);
    if (workload === undefined || !Number.isInteger(index)) return false;
    const id = this.byReplica.get(key(workload, index));
    const e = id ? this.entries.get(id) : undefined;
    if (!e) return false;
    return e.busy || !e.observed.containerId || e.observed.containerId === container.Id;
  }

  /** Per-replica numbers for the metrics. */
  samples(): ReplicaSample[] {
    return [...this.entries.values()].map((e) => ({
      workload: e.desired.workloadId,
      replica: String(e.desired.index),
      state: e.observed.state,
      cpuMillicores: e.observed.state === "RUNNING" ? e.observed.cpuMillicores : 0,
      memoryBytes: e.observed.state === "RUNNING" ? e.observed.memoryBytes : 0,
      restarts: e.observed.restartCount,
    }));
  }

  get size(): number {
    return this.entries.size;
  }

  /** Resolves when no replica has runtime work queued (tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.idle()));
  }

  /** Cancels timers, waits for runtime work in flight, then closes the drivers. */
  async close(): Promise<void> {
    for (const e of this.entries.values()) e.cancelRestart();
    await this.idle();
    for (const driver of this.drivers.values()) await driver.close?.();
  }
}
