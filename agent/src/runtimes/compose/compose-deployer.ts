import { type ComposeProject, type ComposeService, PersysError, serviceConfigHash } from "@persys/schema";
import type Docker from "dockerode";
import type { Logger } from "pino";
import type { LogRotation } from "../docker/container-options.js";
import type { ContainerSnapshot } from "../docker/container-state.js";
import { classifyDockerError, isConflict, isNotFound } from "../docker/docker-errors.js";
import type { DockerRuntime } from "../docker/docker-runtime.js";
import { composeContainerOptions, containerName, networkName, volumeName } from "./compose-container-options.js";
import { L, networkComposeLabels, type ProjectIdentity, volumeComposeLabels } from "./compose-labels.js";
import { completed, type ServiceObservation } from "./service-status.js";

/** One stack as the deployer brings it up: the parsed project and how its objects are labelled. */
export interface StackPlan {
  readonly project: ComposeProject;
  readonly id: ProjectIdentity;
  /** `persys.*` labels of the replica (every container carries them, so GC and events find it). */
  readonly persysLabels: Record<string, string>;
  readonly userLabels: Readonly<Record<string, string>>;
}

export interface ComposeDeployerOptions {
  readonly runtime: DockerRuntime;
  readonly nodeId: string;
  readonly logger: Logger;
  readonly logs?: LogRotation | undefined;
  /** How long a dependency may take to meet its condition. */
  readonly dependencyTimeoutMs?: number;
  /** Poll interval while waiting for a dependency. */
  readonly pollMs?: number;
}

/** Thrown when the desired replica changed while waiting: the next converge takes over. */
export class Superseded extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Deploys a Compose project through the Docker Engine API (no `docker compose` process): project
 * networks and named volumes, then the services in dependency order, each started only once its
 * dependencies meet their `depends_on` conditions. Per-service updates: a container whose
 * `com.docker.compose.config-hash` matches the service's effective config is kept, others are
 * recreated; containers beyond `deploy.replicas` and of services no longer in the file are removed.
 */
export class ComposeDeployer {
  private readonly timeoutMs: number;
  private readonly pollMs: number;

  constructor(private readonly o: ComposeDeployerOptions) {
    this.timeoutMs = o.dependencyTimeoutMs ?? 300_000;
    this.pollMs = o.pollMs ?? 250;
  }

  private get docker(): Docker {
    return this.o.runtime.docker;
  }

  /** Every container of the project on this node. */
  async containers(project: string): Promise<Docker.ContainerInfo[]> {
    return this.o.runtime.list([`${L.project}=${project}`, `persys.node=${this.o.nodeId}`]);
  }

  /** The service containers of a plan, inspected, by service name (ordered by container number). */
  async observe(plan: StackPlan): Promise<ServiceObservation[]> {
    const all = await this.containers(plan.id.project);
    const out: ServiceObservation[] = [];
    for (const s of plan.project.services) {
      const mine = all
        .filter((c) => c.Labels[L.service] === s.name)
        .sort((a, b) => Number(a.Labels[L.number]) - Number(b.Labels[L.number]));
      const snaps: ContainerSnapshot[] = [];
      for (const c of mine) {
        const snap = await this.o.runtime.inspect(c.Id);
        if (snap) snaps.push(snap);
      }
      out.push({ service: s, hash: serviceConfigHash(s, plan.project), containers: snaps });
    }
    return out;
  }

  /**
   * Brings the project up (desired running). `wanted()` is checked while waiting on dependencies:
   * when it turns false, Superseded is thrown and nothing more is started. `progress` runs after
   * each service is up (status reports while later services wait). Recreated services are returned
   * (by name). Failures are PersysErrors naming the service.
   */
  async up(plan: StackPlan, wanted: () => boolean, progress?: () => Promise<void>): Promise<string[]> {
    const { project, id } = plan;
    await this.ensureNetworks(plan);
    await this.ensureVolumes(plan);
    const existing = await this.containers(id.project);
    const enabled = new Set(project.services.map((s) => s.name));
    for (const c of existing) {
      if (!enabled.has(c.Labels[L.service] ?? "")) {
        this.o.logger.info(
          { project: id.project, service: c.Labels[L.service] },
          "removing a service no longer in the file",
        );
        await this.o.runtime.remove(c.Id);
      }
    }
    const recreated: string[] = [];
    for (const s of project.services) {
      for (const [dep, d] of Object.entries(s.dependsOn)) {
        if (!enabled.has(dep)) continue;
        await this.waitFor(plan, dep, d.condition, s.name, wanted);
      }
      const restartForDeps = Object.entries(s.dependsOn).some(([dep, d]) => d.restart && recreated.includes(dep));
      const changed = await this.upService(plan, s, existing, restartForDeps);
      if (changed) recreated.push(s.name);
      await progress?.();
    }
    return recreated;
  }

  /** Creates, recreates, starts or removes one service's containers. Returns whether any was (re)created. */
  private async upService(
    plan: StackPlan,
    s: ComposeService,
    existing: readonly Docker.ContainerInfo[],
    restart: boolean,
  ): Promise<boolean> {
    const hash = serviceConfigHash(s, plan.project);
    const mine = existing.filter((c) => c.Labels[L.service] === s.name);
    let created = false;
    for (const c of mine) {
      const n = Number(c.Labels[L.number]);
      if (!(n >= 1 && n <= s.replicas) || c.Labels[L.hash] !== hash) await this.remove(c.Id);
    }
    const kept = mine.filter((c) => {
      const n = Number(c.Labels[L.number]);
      return n >= 1 && n <= s.replicas && c.Labels[L.hash] === hash;
    });
    for (let n = 1; n <= s.replicas; n++) {
      const c = kept.find((x) => Number(x.Labels[L.number]) === n);
      if (!c) {
        const cid = await this.create(plan, s, n, hash);
        await this.start(cid, s.name);
        created = true;
        continue;
      }
      const snap = await this.o.runtime.inspect(c.Id);
      if (!snap) continue;
      const oneShotDone = !snap.running && snap.exitCode === 0 && snap.startedAt && s.restart === "no";
      if (restart && snap.running) await this.docker.getContainer(c.Id).restart();
      else if (!snap.running && !snap.restarting && !oneShotDone) await this.start(c.Id, s.name);
    }
    return created;
  }

  private async start(id: string, service: string): Promise<void> {
    try {
      await this.o.runtime.start(id);
    } catch (error) {
      throw this.named(error, service);
    }
  }

  private named(error: unknown, service: string): PersysError {
    const e =
      error instanceof PersysError ? error : classifyDockerError(error, "other", { socket: this.o.runtime.socket });
    return new PersysError(e.code, `service ${service}: ${e.message}`, { retryable: e.retryable, details: e.details });
  }

  private async remove(id: string): Promise<void> {
    await this.o.runtime.stop(id);
    await this.o.runtime.remove(id);
  }

  private async create(plan: StackPlan, s: ComposeService, n: number, hash: string): Promise<string> {
    const options = composeContainerOptions(
      plan.project,
      plan.id,
      s,
      n,
      hash,
      plan.persysLabels,
      plan.userLabels,
      this.o.logs,
    );
    try {
      await this.o.runtime.ensureImage(s.image);
    } catch (error) {
      throw this.named(error, s.name);
    }
    let id: string;
    try {
      id = await this.o.runtime.create(options);
    } catch (error) {
      if (!isConflict(error)) throw this.named(error, s.name);
      // A leftover with the name (a crashed recreate): remove it when it is this node's, then retry once.
      const holder = await this.o.runtime.inspect(containerName(plan.id.project, s.name, n));
      if (!holder || holder.labels["persys.node"] !== this.o.nodeId) throw this.named(error, s.name);
      await this.o.runtime.remove(holder.id);
      id = await this.o.runtime.create(options).catch((e: unknown) => {
        throw this.named(e, s.name);
      });
    }
    // Further networks are connected before the start (Docker attaches only one at create).
    for (const [key, net] of Object.entries(s.networks).slice(1)) {
      await this.docker
        .getNetwork(networkName(plan.project, plan.id.project, key))
        .connect({ Container: id, EndpointConfig: { Aliases: [s.name, ...net.aliases] } })
        .catch((e: unknown) => {
          throw this.named(e, s.name);
        });
    }
    return id;
  }

  /** Waits until service `dep` meets `condition` for `dependent`; throws a typed error when it cannot. */
  private async waitFor(
    plan: StackPlan,
    dep: string,
    condition: ComposeService["dependsOn"][string]["condition"],
    dependent: string,
    wanted: () => boolean,
  ): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      if (!wanted()) throw new Superseded(`replica changed while ${dependent} waited for ${dep}`);
      const obs = (await this.observe(plan)).find((o) => o.service.name === dep);
      if (!obs || obs.service.replicas === 0) return;
      const cs = obs.containers;
      if (condition === "service_started" && cs.length > 0 && cs.every((c) => c.running || c.startedAt)) return;
      if (condition === "service_healthy") {
        if (cs.length > 0 && cs.every((c) => c.running && c.health === "healthy")) return;
        if (cs.some((c) => c.running && c.health === "none")) {
          throw new PersysError(
            "INVALID_SPEC",
            `service ${dependent} waits for ${dep} to be healthy, but ${dep} has no healthcheck`,
            {
              details: [
                { path: `services.${dependent}.depends_on.${dep}.condition`, reason: `${dep} has no healthcheck` },
              ],
            },
          );
        }
        const sick = cs.find((c) => c.running && c.health === "unhealthy");
        if (sick) {
          throw new PersysError("UNHEALTHY", `service ${dep} is unhealthy, so ${dependent} was not started`, {
            retryable: true,
          });
        }
      }
      if (condition === "service_completed_successfully") {
        if (completed(obs)) return;
        const bad = cs.find((c) => !c.running && !c.restarting && c.startedAt && c.exitCode !== 0);
        if (bad) {
          throw new PersysError(
            "CONTAINER_EXITED",
            `service ${dep} exited with code ${bad.exitCode}, so ${dependent} (service_completed_successfully) was not started`,
            { retryable: true },
          );
        }
      }
      const stopped = cs.some((c) => !c.running && !c.restarting && c.startedAt);
      if (condition === "service_healthy" && stopped && obs.service.restart === "no") {
        throw new PersysError(
          "CONTAINER_EXITED",
          `service ${dep} stopped before it became healthy, so ${dependent} was not started`,
          { retryable: true },
        );
      }
      if (Date.now() > deadline) {
        throw new PersysError(
          "DEADLINE_EXCEEDED",
          `service ${dependent}: ${dep} did not reach ${condition} within ${Math.round(this.timeoutMs / 1000)} s`,
          { retryable: true },
        );
      }
      await sleep(this.pollMs);
    }
  }

  private async ensureNetworks(plan: StackPlan): Promise<void> {
    for (const n of plan.project.networks) {
      const name = networkName(plan.project, plan.id.project, n.key);
      try {
        await this.docker.getNetwork(name).inspect();
        continue;
      } catch (error) {
        if (!isNotFound(error)) throw classifyDockerError(error, "other", { socket: this.o.runtime.socket });
      }
      if (n.external) {
        throw new PersysError(
          "NETWORK_ERROR",
          `external network ${name} (networks.${n.key}) does not exist on this node`,
          {
            retryable: true,
          },
        );
      }
      try {
        await this.docker.createNetwork({
          Name: name,
          Driver: n.driver,
          Internal: n.internal,
          CheckDuplicate: true,
          Labels: { ...n.labels, ...networkComposeLabels(plan.id.project, n.key), "persys.node": this.o.nodeId },
        });
      } catch (error) {
        if (!isConflict(error)) throw classifyDockerError(error, "other", { socket: this.o.runtime.socket });
      }
    }
  }

  private async ensureVolumes(plan: StackPlan): Promise<void> {
    for (const v of plan.project.volumes) {
      const name = volumeName(plan.project, plan.id.project, v.key);
      if (v.external) {
        try {
          await this.docker.getVolume(name).inspect();
        } catch {
          throw new PersysError(
            "STORAGE_ERROR",
            `external volume ${name} (volumes.${v.key}) does not exist on this node`,
            {
              retryable: true,
            },
          );
        }
        continue;
      }
      // Volume create is idempotent in Docker: an existing volume is returned as is.
      await this.docker
        .createVolume({
          Name: name,
          Driver: v.driver,
          DriverOpts: { ...v.driverOpts },
          Labels: { ...v.labels, ...volumeComposeLabels(plan.id.project, v.key), "persys.node": this.o.nodeId },
        })
        .catch((error: unknown) => {
          throw classifyDockerError(error, "other", { socket: this.o.runtime.socket });
        });
    }
  }

  /** Stops every container of the project (dependents first). */
  async stop(plan: StackPlan): Promise<void> {
    const all = await this.containers(plan.id.project);
    const order = [...plan.project.services].reverse().map((s) => s.name);
    for (const name of order) {
      const s = plan.project.services.find((x) => x.name === name)!;
      await Promise.all(
        all
          .filter((c) => c.Labels[L.service] === name && (c.State === "running" || c.State === "restarting"))
          .map((c) => this.o.runtime.stop(c.Id, Math.ceil(s.stopGracePeriodMs / 1000))),
      );
    }
  }

  /**
   * `down`: removes every container of the project on this node and the networks it created; named
   * volumes only with `removeVolumes` (external ones never). Idempotent.
   */
  async down(project: string, removeVolumes: boolean): Promise<void> {
    const all = await this.containers(project);
    await Promise.all(all.map((c) => this.remove(c.Id)));
    const filter = (kind: string) =>
      JSON.stringify({ label: [`${L.project}=${project}`, `persys.node=${this.o.nodeId}`, kind] });
    const wrap = (error: unknown) => classifyDockerError(error, "remove", { socket: this.o.runtime.socket });
    const networks = await this.docker.listNetworks({ filters: filter(L.network) }).catch((e: unknown) => {
      throw wrap(e);
    });
    for (const n of networks) {
      await this.docker
        .getNetwork(n.Id)
        .remove()
        .catch((e: unknown) => {
          if (!isNotFound(e)) throw wrap(e);
        });
    }
    if (!removeVolumes) return;
    const volumes = await this.docker.listVolumes({ filters: filter(L.volume) }).catch((e: unknown) => {
      throw wrap(e);
    });
    for (const v of volumes.Volumes ?? []) await this.o.runtime.removeVolume(v.Name);
  }
}
