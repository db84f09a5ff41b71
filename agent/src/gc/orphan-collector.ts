import type Docker from "dockerode";
import type { Logger } from "pino";
import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { ActionLog } from "../replicas/action-log.js";
import type { DockerRuntime } from "../runtimes/docker/docker-runtime.js";

export interface OrphanCollectorOptions {
  readonly runtime: DockerRuntime;
  readonly nodeId: string;
  /** Whether a container of this node belongs to a desired replica. */
  readonly owns: (container: Docker.ContainerInfo) => boolean;
  /** An orphan is removed once it has been one for this long. */
  readonly graceMs: number;
  readonly intervalMs: number;
  readonly actions: ActionLog;
  readonly logger: Logger;
  readonly metrics?: AgentMetrics | undefined;
  readonly clock?: () => number;
}

/**
 * Removes orphans: containers labelled for this node (`persys.node=<id>`, as every Persys container
 * is) that no desired replica owns — left over by a deleted replica the agent missed, a crashed
 * recreate, or made by hand. A container must stay an orphan for the grace period (so one being
 * created or adopted is never touched), then it is removed forcefully with its anonymous volumes.
 * Containers of other nodes sharing the same Docker daemon are never looked at.
 */
export class OrphanCollector {
  private readonly since = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<number> | undefined;
  private readonly clock: () => number;

  constructor(private readonly o: OrphanCollectorOptions) {
    this.clock = o.clock ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => void this.scan().catch(() => {}), this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.scanning?.catch(() => {});
  }

  /** One pass; resolves with how many orphans were removed. Docker errors end the pass quietly. */
  scan(): Promise<number> {
    this.scanning ??= this.pass().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private async pass(): Promise<number> {
    let containers: Docker.ContainerInfo[];
    try {
      containers = await this.o.runtime.list([`persys.node=${this.o.nodeId}`]);
    } catch {
      return 0;
    }
    const now = this.clock();
    const seen = new Set<string>();
    let removed = 0;
    for (const c of containers) {
      if (this.o.owns(c)) continue;
      seen.add(c.Id);
      const first = this.since.get(c.Id) ?? now;
      this.since.set(c.Id, first);
      if (now - first < this.o.graceMs) continue;
      if (this.o.owns(c)) continue;
      const name = c.Names[0]?.replace(/^\//, "") ?? c.Id.slice(0, 12);
      const action = this.o.actions.begin("gc", name);
      action.start();
      try {
        await this.o.runtime.remove(c.Id);
        removed++;
        this.o.metrics?.orphansRemoved.inc();
        this.o.logger.info(
          { container: name, id: c.Id.slice(0, 12), orphanForMs: now - first },
          "removed an orphan container (Persys-labelled, no desired replica)",
        );
        action.done();
      } catch (error) {
        action.done((error as Error).message);
      }
    }
    for (const id of this.since.keys()) if (!seen.has(id)) this.since.delete(id);
    return removed;
  }
}
