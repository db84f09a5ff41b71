import type { ContainerSample, DockerRuntime } from "./docker-runtime.js";

/** A container to sample and where its numbers go. */
export interface SampleTarget {
  readonly containerId: string;
  record(usage: { cpuMillicores: number; memoryBytes: number; at: Date }): void;
}

/** CPU millicores between two cumulative samples (0 when they do not span time). Pure. */
export function cpuMillicoresBetween(previous: ContainerSample, current: ContainerSample): number {
  const wallNs = (current.at - previous.at) * 1_000_000;
  const cpuNs = current.cpuNanos - previous.cpuNanos;
  if (wallNs <= 0 || cpuNs < 0) return 0;
  return Math.round((cpuNs / wallNs) * 1000);
}

/**
 * Samples CPU and memory of running containers from Docker's stats API (one-shot samples, at most
 * `concurrency` at a time, every `intervalMs`), so a node with hundreds of containers costs the
 * daemon a modest, bounded rate. CPU is the delta between two of our samples.
 */
export class UsageSampler {
  private timer: NodeJS.Timeout | undefined;
  private readonly previous = new Map<string, ContainerSample>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly runtime: DockerRuntime,
    private readonly targets: () => readonly SampleTarget[],
    private readonly options: { intervalMs: number; concurrency?: number },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sampleAll().finally(() => {
        this.running = undefined;
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Samples every target once (also used by tests). */
  async sampleAll(): Promise<void> {
    const targets = [...this.targets()];
    const live = new Set(targets.map((t) => t.containerId));
    for (const id of this.previous.keys()) if (!live.has(id)) this.previous.delete(id);
    const workers = Array.from({ length: Math.min(this.options.concurrency ?? 2, targets.length) }, async () => {
      for (let t = targets.shift(); t; t = targets.shift()) {
        try {
          const sample = await this.runtime.sample(t.containerId);
          if (!sample) continue;
          const before = this.previous.get(t.containerId);
          this.previous.set(t.containerId, sample);
          t.record({
            cpuMillicores: before ? cpuMillicoresBetween(before, sample) : 0,
            memoryBytes: sample.memoryBytes,
            at: new Date(sample.at),
          });
        } catch {
          // Docker busy or gone: the next round tries again; the monitor reports the runtime.
        }
      }
    });
    await Promise.all(workers);
  }
}
