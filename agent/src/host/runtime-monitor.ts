import { api } from "@persys/schema";
import type { ObservedReason } from "../runtimes/docker/container-state.js";
import type { DockerRuntime } from "../runtimes/docker/docker-runtime.js";
import { diskOf } from "./host-resources.js";

/** The node condition `RuntimeReady` as the agent last evaluated it. */
export interface RuntimeCondition {
  readonly ready: boolean;
  /** CamelCase cause: DockerReady, DockerUnavailable, DiskFull, DockerDisabled. */
  readonly reason: string;
  readonly message: string;
  readonly since: Date;
}

export interface ProbeResult {
  readonly dockerEnabled: boolean;
  /** Why Docker did not answer; undefined when it did. */
  readonly dockerError?: string | undefined;
  readonly disks: readonly { readonly path: string; readonly freeBytes: number }[];
  readonly minFreeBytes: number;
}

/** RuntimeReady from one probe: Docker must answer and every disk must have `minFreeBytes` free. Pure. */
export function evaluateRuntime(p: ProbeResult): { ready: boolean; reason: string; message: string } {
  if (!p.dockerEnabled) return { ready: false, reason: "DockerDisabled", message: "the Docker runtime is disabled" };
  if (p.dockerError !== undefined) return { ready: false, reason: "DockerUnavailable", message: p.dockerError };
  const full = p.disks.filter((d) => d.freeBytes < p.minFreeBytes);
  if (full.length > 0) {
    const list = full.map((d) => `${d.path} has ${Math.floor(d.freeBytes / 1_048_576)} MiB free`).join(", ");
    return {
      ready: false,
      reason: "DiskFull",
      message: `disk almost full: ${list} (need ${Math.floor(p.minFreeBytes / 1_048_576)} MiB)`,
    };
  }
  return { ready: true, reason: "DockerReady", message: "Docker answers and the disk has room" };
}

export interface RuntimeMonitorOptions {
  readonly runtime?: DockerRuntime | undefined;
  /** The state dir; Docker's data root is added once Docker has told where it is. */
  readonly stateDir: string;
  readonly minFreeDiskMib: number;
  readonly intervalMs?: number;
  /** The condition changed (ready ↔ not ready, or another reason). */
  readonly onChange: (condition: RuntimeCondition) => void;
  readonly clock?: () => number;
}

/**
 * Keeps the node condition RuntimeReady current: probes Docker (`/_ping`) and the free space of the
 * state dir and of Docker's data root every few seconds, and at once when asked (a runtime call
 * failed, the events stream broke). A dead daemon or a full disk is a condition, never a crash.
 */
export class RuntimeMonitor {
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private again = false;
  private dockerRoot: string | undefined;
  private readonly clock: () => number;
  current: RuntimeCondition;

  constructor(private readonly o: RuntimeMonitorOptions) {
    this.clock = o.clock ?? Date.now;
    this.current = { ready: false, reason: "Probing", message: "not probed yet", since: new Date(this.clock()) };
  }

  /** Probes once, then every interval. */
  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => this.probeSoon(), this.o.intervalMs ?? 5_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Probes now (coalesced with a probe in flight). */
  probeSoon(): void {
    if (this.probing) {
      this.again = true;
      return;
    }
    void this.probe();
  }

  /** Undefined when ready, else why not as a RUNTIME_UNAVAILABLE reason. */
  notReady(): ObservedReason | undefined {
    if (this.current.ready) return undefined;
    return { code: "RUNTIME_UNAVAILABLE", message: `${this.current.reason}: ${this.current.message}`, retryable: true };
  }

  /** The condition in the API's shape. */
  condition(): api.Condition {
    const c = this.current;
    return {
      type: "RuntimeReady",
      status: c.ready ? api.ConditionStatus.CONDITION_STATUS_TRUE : api.ConditionStatus.CONDITION_STATUS_FALSE,
      reason: c.reason,
      message: c.message,
      lastTransitionAt: c.since,
    };
  }

  /** Docker's data root once known (for the disk check). */
  get dataRoot(): string | undefined {
    return this.dockerRoot;
  }

  private probe(): Promise<void> {
    this.probing = (async () => {
      let dockerError: string | undefined;
      const runtime = this.o.runtime;
      if (runtime) {
        try {
          await runtime.ping();
          if (this.dockerRoot === undefined) this.dockerRoot = (await runtime.info()).rootDir || "";
        } catch (error) {
          dockerError = (error as Error).message;
        }
      }
      const paths = [this.o.stateDir, ...(this.dockerRoot ? [this.dockerRoot] : [])];
      const disks = paths.flatMap((path) => {
        const d = diskOf(path);
        return d ? [{ path, freeBytes: d.freeBytes }] : [];
      });
      const next = evaluateRuntime({
        dockerEnabled: runtime !== undefined,
        dockerError,
        disks,
        minFreeBytes: this.o.minFreeDiskMib * 1_048_576,
      });
      const prev = this.current;
      if (prev.ready !== next.ready || prev.reason !== next.reason || prev.message !== next.message) {
        const changed = prev.ready !== next.ready || prev.reason !== next.reason;
        this.current = { ...next, since: changed ? new Date(this.clock()) : prev.since };
        if (changed) this.o.onChange(this.current);
      }
    })().finally(() => {
      this.probing = undefined;
      if (this.again) {
        this.again = false;
        this.probeSoon();
      }
    });
    return this.probing;
  }
}
