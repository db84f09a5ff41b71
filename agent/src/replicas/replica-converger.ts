import { PersysError } from "@persys/schema";
import { containerCreateOptions, type LogRotation, managedVolumeName } from "../runtimes/docker/container-options.js";
import {
  type ContainerSnapshot,
  type ObservedReason,
  observedStateOf,
  type ReplicaStateName,
} from "../runtimes/docker/container-state.js";
import { classifyDockerError, isConflict } from "../runtimes/docker/docker-errors.js";
import type { ContainerEvent } from "../runtimes/docker/docker-events.js";
import type { DockerRuntime } from "../runtimes/docker/docker-runtime.js";
import { type ContainerReplica, type DesiredReplica, runtimeRevision } from "./desired-replica.js";
import type { ObservedReplicaReason, ReplicaDriver, ReplicaDriverContext } from "./replica-driver.js";
import type { ReplicaEntry } from "./replica-entry.js";
import { defaultSecretRoot, type ReplicaSecretValues, SecretFiles, secretRefsOf } from "./replica-secrets.js";
import { restartDecision } from "./restart-policy.js";

export interface ReplicaConvergerOptions {
  /** Where secret files are written (per replica, 0700). Default: tmpfs (/dev/shm) when the node has it. */
  readonly secretFiles?: SecretFiles;
  readonly runtime: DockerRuntime;
  readonly logs?: LogRotation | undefined;
  /** Undefined while Docker is ready; else why not. */
  readonly notReady: () => ObservedReason | undefined;
  /** A runtime call found Docker unreachable. */
  readonly onRuntimeError: () => void;
}

const reasonOf = (e: PersysError): ObservedReason => ({ code: e.code, message: e.message, retryable: e.retryable });
const short = (id: string) => id.slice(0, 12);

/** The container replica of an entry (the container driver only ever gets those). */
function containerReplica(d: DesiredReplica): ContainerReplica {
  if (d.kind !== "container") throw new PersysError("INTERNAL", `replica ${d.id} is a ${d.kind}, not a container`);
  return d;
}

/**
 * The container driver: the runtime work of one container replica, run on its entry's serial
 * queue: converge to the desired revision and state (create, start, stop, recreate on a new
 * revision; reuse on the same one), observe the container and map it to a typed state, restart it
 * by policy after a stop Docker will not undo, and tear it down. Every failure becomes the replica's
 * reason; nothing throws out.
 */
export class ReplicaConverger implements ReplicaDriver {
  readonly kind = "container" as const;
  private readonly o: ReplicaConvergerOptions & ReplicaDriverContext;
  private readonly secretFiles: SecretFiles;

  constructor(ctx: ReplicaDriverContext, options: ReplicaConvergerOptions) {
    this.o = { ...ctx, ...options };
    this.secretFiles = options.secretFiles ?? new SecretFiles(defaultSecretRoot(ctx.nodeId));
  }

  notReady(): ObservedReason | undefined {
    const reason = this.o.notReady();
    if (reason) this.o.onRuntimeError();
    return reason;
  }

  private set(e: ReplicaEntry, state: ReplicaStateName, reason?: ObservedReplicaReason): void {
    this.o.set(e, state, reason);
  }

  /** A container event from Docker: re-read the replica's container (and restart it by policy). */
  onEvent(event: ContainerEvent): void {
    const workload = event.attributes["persys.workload"];
    const index = Number(event.attributes["persys.replica"]);
    if (workload === undefined || !Number.isInteger(index)) return;
    const e = this.o.find(workload, index);
    if (!e || e.desired.desired === "deleted" || e.desired.kind !== "container") return;
    if (e.observed.containerId && e.observed.containerId !== event.id) return;
    this.o.enqueue(e, () => this.onContainerEvent(e, event.action));
  }

  /**
   * Brings the replica's container to the desired revision and state. `adopt` (agent start, Docker
   * back): an existing container at the revision is kept, and a stopped one is restarted only as its
   * restart policy says.
   */
  async converge(e: ReplicaEntry, mode: "apply" | "adopt"): Promise<void> {
    const d = containerReplica(e.desired);
    if (d.desired === "deleted") return this.teardown(e);
    e.cancelRestart();
    const action = this.o.actions.begin("apply", d.id);
    action.start();
    let container: ContainerSnapshot | undefined;
    try {
      container = await this.currentContainer(e);
      if (
        container &&
        (runtimeRevision(container.labels["persys.revision"] ?? "") !== runtimeRevision(d.revision) || e.recreate)
      ) {
        await this.o.runtime.stop(container.id);
        await this.o.runtime.remove(container.id);
        container = undefined;
      }
      e.recreate = false;
      let created: string | undefined;
      if (!container) {
        created = await this.create(d, e.secrets);
        e.observed.containerId = created;
        e.observed.observedRevision = d.revision;
        e.agentRestarts = 0;
        e.restartDelayMs = 0;
        this.o.store.recordRestarts(d.id, 0);
        this.o.logger.debug({ replica: d.id, container: short(created) }, "container created");
      }
      e.lastError = undefined;
      if (created) {
        if (d.desired === "running") await this.o.runtime.start(created);
      } else if (container && d.desired === "running" && !container.running && !container.restarting) {
        if (mode === "adopt" && container.startedAt) {
          const refreshed = await this.refresh(e);
          if (refreshed) this.scheduleRestart(e, refreshed);
          action.done();
          return;
        }
        await this.o.runtime.start(container.id);
      } else if (container && d.desired === "stopped" && (container.running || container.restarting)) {
        await this.o.runtime.stop(container.id, d.spec.stopTimeoutSeconds);
      }
      action.done();
    } catch (error) {
      const failure = classifyDockerError(error, "other", { image: d.spec.image, socket: this.o.runtime.socket });
      e.lastError = reasonOf(failure);
      action.done(failure.message);
      if (failure.code === "RUNTIME_UNAVAILABLE") this.o.onRuntimeError();
      this.o.logger.warn({ replica: d.id, code: failure.code, err: failure.message }, "replica apply failed");
    }
    await this.refresh(e);
    if (e.appliedAt > 0 && e.observed.state !== "STARTING" && e.observed.state !== "STOPPING") {
      this.o.metrics?.applySeconds.observe((this.o.clock() - e.appliedAt) / 1000);
      e.appliedAt = 0;
    }
  }

  /** Pulls the image when absent (counted by outcome). */
  private async pull(d: ContainerReplica): Promise<string> {
    try {
      const outcome = await this.o.runtime.ensureImage(d.spec.image);
      if (outcome === "pulled") this.o.metrics?.pulls.inc({ result: "pulled" });
      return outcome;
    } catch (error) {
      const code = error instanceof PersysError ? error.code : "RUNTIME_ERROR";
      if (code === "IMAGE_NOT_FOUND") this.o.metrics?.pulls.inc({ result: "not_found" });
      else if (code === "IMAGE_PULL_FAILED") this.o.metrics?.pulls.inc({ result: "failed" });
      throw error;
    }
  }

  /**
   * Creates the replica's container named after the replica (`web-0`), pulling the image first when
   * Docker does not have it (create is tried first: the image is nearly always there, and this saves
   * a round trip on the start path). When the name is taken by a leftover of this node it is removed;
   * when another agent on the same Docker (or a person) holds it, the container is named
   * `<replica>.<node id>` instead.
   */
  private async create(d: ContainerReplica, values: ReplicaSecretValues | undefined): Promise<string> {
    let name = d.id;
    let pulled = false;
    const secrets = await this.secretFiles.materialise(d.id, secretRefsOf(d), values);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return await this.o.runtime.create(
          containerCreateOptions(d, {
            name,
            nodeId: this.o.nodeId,
            ...(this.o.logs ? { logs: this.o.logs } : {}),
            ...(secrets ? { secrets } : {}),
          }),
        );
      } catch (error) {
        if (!pulled && error instanceof PersysError && error.code === "IMAGE_NOT_FOUND") {
          pulled = true;
          await this.pull(d);
          continue;
        }
        if (!isConflict(error)) throw error;
        const holder = await this.o.runtime.inspect(name);
        if (!holder) continue;
        if (holder.labels["persys.node"] === this.o.nodeId) await this.o.runtime.remove(holder.id);
        else name = `${d.id}.${this.o.nodeId}`;
      }
    }
    throw new PersysError("RUNTIME_ERROR", `cannot create container ${name}: the name stays in use`);
  }

  /** The replica's container: the one it last used, else one found by the replica's labels. */
  private async currentContainer(e: ReplicaEntry): Promise<ContainerSnapshot | undefined> {
    if (e.observed.containerId) {
      const known = await this.o.runtime.inspect(e.observed.containerId);
      if (known) return known;
    }
    if (e.fresh) {
      e.fresh = false;
      return undefined;
    }
    const d = e.desired;
    const found = await this.o.runtime.list(this.labelsOf(d));
    const best = [...found].sort(
      (a, b) =>
        Number(runtimeRevision(b.Labels["persys.revision"] ?? "") === runtimeRevision(d.revision)) -
          Number(runtimeRevision(a.Labels["persys.revision"] ?? "") === runtimeRevision(d.revision)) ||
        b.Created - a.Created,
    )[0];
    if (!best) return undefined;
    e.observed.containerId = best.Id;
    return this.o.runtime.inspect(best.Id);
  }

  private labelsOf(d: DesiredReplica): string[] {
    return [`persys.node=${this.o.nodeId}`, `persys.workload=${d.workloadId}`, `persys.replica=${d.index}`];
  }

  /**
   * Reads the container and records the replica's state from it. Returns the container (undefined
   * when there is none). When Docker does not answer, the last known state is kept.
   */
  async refresh(e: ReplicaEntry): Promise<ContainerSnapshot | undefined> {
    const d = e.desired;
    if (d.desired === "deleted") return undefined;
    const id = e.observed.containerId;
    let c: ContainerSnapshot | undefined;
    try {
      c = id ? await this.o.runtime.inspect(id) : undefined;
    } catch {
      this.o.onRuntimeError();
      return undefined;
    }
    if (!c) {
      if (e.lastError) this.set(e, "FAILED", e.lastError);
      else if (id) {
        e.recreate = true;
        this.set(e, "FAILED", {
          code: "RUNTIME_ERROR",
          message: `container ${short(id)} was removed outside Persys`,
          retryable: true,
        });
      }
      return undefined;
    }
    if (c.running) e.lastError = undefined;
    const observed = observedStateOf(c, d.desired, e.lastError);
    e.observed.ports = c.ports;
    if (c.startedAt) e.observed.startedAt = c.startedAt;
    e.observed.restartCount = c.restartCount + e.agentRestarts;
    const label = c.labels["persys.revision"] ?? d.revision;
    // A container rebooted in place keeps the label it was created with; it runs the desired revision
    // once the reboot is done (`reboot` sets observedRevision), so only a different one is reported.
    if (runtimeRevision(label) !== runtimeRevision(d.revision)) e.observed.observedRevision = label;
    else if (runtimeRevision(e.observed.observedRevision) !== runtimeRevision(d.revision))
      e.observed.observedRevision = d.revision;
    this.set(e, observed.state, observed.reason);
    return c;
  }

  /** After a container event: re-read it and, when it stopped on its own, apply its restart policy. */
  async onContainerEvent(e: ReplicaEntry, action: string): Promise<void> {
    const c = await this.refresh(e);
    if (!c || e.desired.desired !== "running") return;
    if (["die", "stop", "kill", "oom"].includes(action) || !c.running) this.scheduleRestart(e, c);
  }

  /**
   * Restarts a stopped container of a replica that should run, as its policy says, after Docker's
   * backoff — for stops Docker itself will not undo (`docker kill`, `docker stop`). While it waits the
   * replica is STARTING with why it stopped and when it restarts.
   */
  scheduleRestart(e: ReplicaEntry, c: ContainerSnapshot): void {
    if (e.restartTimer || c.running || c.restarting || c.status === "removing" || c.status === "dead") return;
    if (e.lastError) return;
    const d = containerReplica(e.desired);
    const ranFor = c.startedAt && c.finishedAt ? c.finishedAt.getTime() - c.startedAt.getTime() : 0;
    const decision = restartDecision({
      mode: d.spec.restart.mode,
      maxRetries: d.spec.restart.maxRetries,
      exitCode: c.exitCode,
      oomKilled: c.oomKilled,
      restarts: e.observed.restartCount,
      ranForMs: ranFor,
      previousDelayMs: e.restartDelayMs,
    });
    if (!decision.restart) return;
    e.restartDelayMs = decision.delayMs;
    const why = observedStateOf(c, "running").reason ?? {
      code: "CONTAINER_EXITED" as const,
      message: `exited with code ${c.exitCode}`,
      retryable: true,
    };
    this.set(e, "STARTING", {
      ...why,
      message: `${why.message}; restarting in ${decision.delayMs} ms (restart policy ${d.spec.restart.mode})`,
      nextRetryAt: new Date(this.o.clock() + decision.delayMs),
    });
    const id = c.id;
    e.restartTimer = setTimeout(() => {
      e.restartTimer = undefined;
      void e.enqueue(
        () => this.restartNow(e, id),
        (error) => this.o.logger.warn({ replica: d.id, err: String(error) }, "restart failed"),
      );
    }, decision.delayMs);
    e.restartTimer.unref();
  }

  private async restartNow(e: ReplicaEntry, id: string): Promise<void> {
    if (e.desired.desired !== "running" || e.observed.containerId !== id) return;
    const c = await this.o.runtime.inspect(id);
    if (!c || c.running || c.restarting) {
      await this.refresh(e);
      return;
    }
    const action = this.o.actions.begin("restart", e.desired.id);
    action.start();
    try {
      await this.o.runtime.start(id);
      e.agentRestarts++;
      this.o.store.recordRestarts(e.desired.id, e.agentRestarts);
      this.o.metrics?.restarts.inc();
      action.done();
    } catch (error) {
      const failure = classifyDockerError(error, "start", { socket: this.o.runtime.socket });
      e.lastError = reasonOf(failure);
      action.done(failure.message);
    }
    await this.refresh(e);
  }

  /**
   * Removes every container of the replica on this node (graceful stop with its stop timeout, then
   * remove with anonymous volumes; named volumes stay, Go managed volumes go unless retained), then
   * forgets it. When Docker fails, it stays DELETING with the reason and is retried with backoff.
   */
  /**
   * Restarts the replica's container in place (SIGTERM, the stop grace, then start: same container
   * id and filesystem). A container that is not running is converged instead.
   */
  async reboot(e: ReplicaEntry): Promise<void> {
    const d = containerReplica(e.desired);
    const id = e.observed.containerId;
    const c = id ? await this.o.runtime.inspect(id).catch(() => undefined) : undefined;
    if (!c?.running) {
      e.observed.observedRevision = d.revision;
      return this.converge(e, "apply");
    }
    e.cancelRestart();
    const action = this.o.actions.begin("reboot", d.id);
    action.start();
    try {
      await this.o.runtime.stop(c.id, d.spec.stopTimeoutSeconds);
      await this.o.runtime.start(c.id);
      e.observed.observedRevision = d.revision;
      e.lastError = undefined;
      action.done();
    } catch (error) {
      const failure = classifyDockerError(error, "other", { image: d.spec.image, socket: this.o.runtime.socket });
      e.lastError = reasonOf(failure);
      action.done(failure.message);
    }
    await this.refresh(e);
  }

  async teardown(e: ReplicaEntry, attempt = 0): Promise<void> {
    e.cancelRestart();
    const d = containerReplica(e.desired);
    const action = this.o.actions.begin("delete", d.id);
    action.start();
    try {
      this.set(e, "DELETING", e.observed.state === "DELETING" ? e.observed.reason : undefined);
      const containers = await this.o.runtime.list(this.labelsOf(d));
      await Promise.all(
        containers.map(async (c) => {
          if (c.State === "running" || c.State === "restarting" || c.State === "paused")
            await this.o.runtime.stop(c.Id, d.spec.stopTimeoutSeconds);
          await this.o.runtime.remove(c.Id);
        }),
      );
      for (const m of d.spec.mounts) {
        if (m.kind === "managed" && m.removeOnDelete) await this.o.runtime.removeVolume(managedVolumeName(m.source));
      }
      this.o.metrics?.deletes.inc({ result: "ok" });
      action.done();
      if (e.desired.desired !== "deleted") return; // applied again meanwhile: its converge is queued next
      await this.secretFiles.remove(d.id);
      this.o.store.delete(d.id);
      this.o.gone(e);
    } catch (error) {
      const failure = classifyDockerError(error, "remove", { socket: this.o.runtime.socket });
      this.o.metrics?.deletes.inc({ result: "error" });
      action.done(failure.message);
      if (e.desired.desired !== "deleted") return;
      this.set(e, "DELETING", reasonOf(failure));
      if (failure.code === "RUNTIME_UNAVAILABLE") this.o.onRuntimeError();
      const delay = Math.min(30_000, 500 * 2 ** attempt);
      e.restartTimer = setTimeout(() => {
        e.restartTimer = undefined;
        void e.enqueue(
          () => this.teardown(e, attempt + 1),
          () => {},
        );
      }, delay);
      e.restartTimer.unref();
    }
  }
}
