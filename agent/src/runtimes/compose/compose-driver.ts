import { rmSync } from "node:fs";
import { join } from "node:path";
import { type api, PersysError } from "@persys/schema";
import { type DesiredReplica, replicaLabels } from "../../replicas/desired-replica.js";
import type { ObservedReplicaReason, ReplicaDriver, ReplicaDriverContext } from "../../replicas/replica-driver.js";
import type { ReplicaEntry } from "../../replicas/replica-entry.js";
import type { LogRotation } from "../docker/container-options.js";
import type { ObservedReason } from "../docker/container-state.js";
import { classifyDockerError } from "../docker/docker-errors.js";
import type { ContainerEvent } from "../docker/docker-events.js";
import type { DockerRuntime } from "../docker/docker-runtime.js";
import { ComposeDeployer, type StackPlan, Superseded } from "./compose-deployer.js";
import { L } from "./compose-labels.js";
import type { ComposeRuntimeSpec } from "./compose-runtime-spec.js";
import { loadStack } from "./compose-stack-source.js";
import { serviceStatus } from "./service-status.js";

export interface ComposeDriverOptions {
  readonly runtime: DockerRuntime;
  /** The agent's state dir: stacks keep their files and git checkouts under `<stateDir>/compose/`. */
  readonly stateDir: string;
  /** Undefined while Docker is ready; else why not. */
  readonly notReady: () => ObservedReason | undefined;
  /** A runtime call found Docker unreachable. */
  readonly onRuntimeError: () => void;
  readonly logs?: LogRotation | undefined;
  /** How long a service may wait for a dependency's condition (default 5 minutes). */
  readonly dependencyTimeoutMs?: number;
}

type ComposeReplica = Extract<DesiredReplica, { kind: "compose" }>;

function composeReplica(d: DesiredReplica): ComposeReplica {
  if (d.kind !== "compose") throw new PersysError("INTERNAL", `replica ${d.id} is a ${d.kind}, not a compose stack`);
  return d;
}

const reasonOf = (e: PersysError): ObservedReplicaReason => ({
  code: e.code,
  message: e.message,
  retryable: e.retryable,
});

/**
 * The compose driver: one Compose project per replica, deployed through the Docker API by
 * {@link ComposeDeployer}. A converge loads the file (inline, or a git checkout fetched at the ref —
 * on `apply` only; `adopt` reuses the checkout on disk), parses it with the same parser the control
 * plane validates with, brings the project up or stops it, and rolls the services' states up into
 * the replica's (the failing service named in the reason). Docker events of the project's
 * containers refresh it. Failures become the replica's reason; nothing throws out.
 */
export class ComposeDriver implements ReplicaDriver {
  readonly kind = "compose" as const;
  private readonly deployer: ComposeDeployer;
  /**
   * The plan per replica id (what refreshes observe) and the revision it was fully brought up at:
   * a replica is reported RUNNING only once every service is up at its current revision.
   */
  private readonly plans = new Map<string, { plan: StackPlan; commit: string; upAt?: string }>();
  /** Replicas with an event-driven refresh waiting in their queue. */
  private readonly refreshQueued = new WeakSet<ReplicaEntry>();

  constructor(
    private readonly ctx: ReplicaDriverContext,
    private readonly o: ComposeDriverOptions,
  ) {
    this.deployer = new ComposeDeployer({
      runtime: o.runtime,
      nodeId: ctx.nodeId,
      logger: ctx.logger,
      logs: o.logs,
      ...(o.dependencyTimeoutMs ? { dependencyTimeoutMs: o.dependencyTimeoutMs } : {}),
    });
  }

  notReady(): ObservedReason | undefined {
    const reason = this.o.notReady();
    if (reason) this.o.onRuntimeError();
    return reason;
  }

  private dirOf(spec: ComposeRuntimeSpec): string {
    return join(this.o.stateDir, "compose", spec.project);
  }

  async converge(e: ReplicaEntry, mode: "apply" | "adopt"): Promise<void> {
    const d = composeReplica(e.desired);
    if (d.desired === "deleted") return this.teardown(e);
    const action = this.ctx.actions.begin("apply", d.id);
    action.start();
    try {
      const stack = await loadStack(d.spec, this.dirOf(d.spec), mode === "apply" || e.recreate);
      e.recreate = false;
      const plan: StackPlan = {
        project: stack.project,
        id: stack.id,
        persysLabels: replicaLabels(d, this.ctx.nodeId),
        userLabels: d.spec.labels,
      };
      const held: { plan: StackPlan; commit: string; upAt?: string } = { plan, commit: stack.commit };
      this.plans.set(d.id, held);
      for (const w of stack.project.warnings) this.ctx.logger.warn({ replica: d.id, path: w.path }, w.message);
      e.lastError = undefined;
      if (d.desired === "running") {
        const recreated = await this.deployer.up(
          plan,
          () => e.desired === d,
          () => this.refresh(e),
        );
        held.upAt = d.revision;
        if (recreated.length > 0)
          this.ctx.logger.info({ replica: d.id, services: recreated }, "compose services (re)created");
      } else await this.deployer.stop(plan);
      e.observed.observedRevision = d.revision;
      action.done();
    } catch (error) {
      if (error instanceof Superseded) {
        action.done("superseded by a newer apply");
        return;
      }
      const failure =
        error instanceof PersysError ? error : classifyDockerError(error, "other", { socket: this.o.runtime.socket });
      e.lastError = reasonOf(failure);
      action.done(failure.message);
      if (failure.code === "RUNTIME_UNAVAILABLE") this.o.onRuntimeError();
      this.ctx.logger.warn({ replica: d.id, code: failure.code, err: failure.message }, "compose apply failed");
    }
    await this.refresh(e);
  }

  /** Re-reads the project's containers and records the replica's state from its services. */
  async refresh(e: ReplicaEntry): Promise<void> {
    const d = composeReplica(e.desired);
    if (d.desired === "deleted") return;
    const held = this.plans.get(d.id);
    if (!held) {
      if (e.lastError) this.ctx.set(e, "FAILED", e.lastError);
      return;
    }
    let observed: Awaited<ReturnType<ComposeDeployer["observe"]>>;
    try {
      observed = await this.deployer.observe(held.plan);
    } catch {
      this.o.onRuntimeError();
      return;
    }
    const rollups = observed.map(serviceStatus);
    const services: api.ComposeServiceStatus[] = rollups.map((r) => r.status);
    e.observed.compose = { services, sourceCommit: held.commit };
    const containers = observed.flatMap((o) => o.containers);
    e.observed.ports = containers.flatMap((c) => c.ports);
    const started = containers.map((c) => c.startedAt?.getTime() ?? 0).filter((t) => t > 0);
    if (started.length > 0) e.observed.startedAt = new Date(Math.min(...started));
    e.observed.restartCount = containers.reduce((n, c) => n + c.restartCount, 0);
    if (d.desired === "stopped") {
      const running = containers.some((c) => c.running || c.restarting);
      this.ctx.set(e, running ? "STOPPING" : "STOPPED", e.lastError);
      return;
    }
    if (e.lastError) return this.ctx.set(e, "FAILED", e.lastError);
    // While services are still being brought up at this revision, the stack is STARTING whatever
    // its containers say (an old container about to be recreated must not fail or pass the rollout).
    if (held.upAt !== d.revision) return this.ctx.set(e, "STARTING");
    const failed = rollups.find((r) => r.state === "FAILED");
    if (failed?.reason) return this.ctx.set(e, "FAILED", failed.reason);
    this.ctx.set(e, rollups.every((r) => r.state === "RUNNING") ? "RUNNING" : "STARTING");
  }

  /**
   * A Docker event of one of this node's containers: refresh the compose replica it belongs to.
   * Healthcheck exec events are skipped, and at most one refresh per replica waits in its queue
   * (a healthcheck every 300 ms must not starve an apply queued behind refreshes).
   */
  onEvent(event: ContainerEvent): void {
    if (!event.attributes[L.project] || event.action.startsWith("exec_")) return;
    const workload = event.attributes["persys.workload"];
    const index = Number(event.attributes["persys.replica"]);
    if (workload === undefined || !Number.isInteger(index)) return;
    const e = this.ctx.find(workload, index);
    if (e?.desired.kind !== "compose" || e.desired.desired === "deleted") return;
    if (this.refreshQueued.has(e)) return;
    this.refreshQueued.add(e);
    this.ctx.enqueue(e, () => {
      this.refreshQueued.delete(e);
      return this.refresh(e);
    });
  }

  /** `down` for the replica: containers and networks go, named volumes only when the spec asks. */
  async teardown(e: ReplicaEntry, attempt = 0): Promise<void> {
    const d = composeReplica(e.desired);
    const action = this.ctx.actions.begin("delete", d.id);
    action.start();
    try {
      this.ctx.set(e, "DELETING", e.observed.state === "DELETING" ? e.observed.reason : undefined);
      await this.deployer.down(d.spec.project, d.spec.removeVolumes);
      action.done();
      if (e.desired.desired !== "deleted") return; // applied again meanwhile: its converge is queued next
      this.plans.delete(d.id);
      rmSync(this.dirOf(d.spec), { recursive: true, force: true });
      this.ctx.store.delete(d.id);
      this.ctx.gone(e);
    } catch (error) {
      const failure =
        error instanceof PersysError ? error : classifyDockerError(error, "remove", { socket: this.o.runtime.socket });
      action.done(failure.message);
      if (e.desired.desired !== "deleted") return;
      this.ctx.set(e, "DELETING", reasonOf(failure));
      if (failure.code === "RUNTIME_UNAVAILABLE") this.o.onRuntimeError();
      const delay = Math.min(30_000, 500 * 2 ** attempt);
      e.restartTimer = setTimeout(() => {
        e.restartTimer = undefined;
        this.ctx.enqueue(e, () => this.teardown(e, attempt + 1));
      }, delay);
      e.restartTimer.unref();
    }
  }
}
