import type { Readable } from "node:stream";
import { PersysError } from "@persys/schema";
import Docker from "dockerode";
import { type ContainerSnapshot, snapshotOf } from "./container-state.js";
import { classifyDockerError, type DockerOperation, dockerErrorText, isConflict, isNotFound } from "./docker-errors.js";

export interface DockerRuntimeOptions {
  /** Unix socket of the Docker Engine API. */
  readonly socket: string;
  /** Deadline of one image pull. */
  readonly pullTimeoutMs: number;
  /** Deadline of quick calls (inspect, list, ping). */
  readonly callTimeoutMs?: number;
}

/** What a pull did, for metrics and the action log. */
export type PullOutcome = "present" | "pulled";

/** Docker's one-shot stats sample of a container (the fields the agent reads). */
export interface ContainerSample {
  /** Cumulative CPU time in nanoseconds. */
  readonly cpuNanos: number;
  /** When Docker read it (ms since epoch). */
  readonly at: number;
  /** Working set: usage minus inactive file cache. */
  readonly memoryBytes: number;
}

/**
 * The Docker Engine API as the agent uses it (dockerode over the unix socket), with every failure
 * turned into a typed PersysError by `classifyDockerError` (the daemon's or registry's text kept).
 * Image pulls of the same reference share one request. No call retries by itself: retry policy
 * belongs to the replica manager and the control plane.
 */
export class DockerRuntime {
  readonly docker: Docker;
  private readonly pulls = new Map<string, Promise<PullOutcome>>();
  private readonly callTimeoutMs: number;
  /** Pulls started (tests and metrics count them). */
  pullAttempts = 0;

  constructor(private readonly o: DockerRuntimeOptions) {
    this.docker = new Docker({ socketPath: o.socket });
    this.callTimeoutMs = o.callTimeoutMs ?? 15_000;
  }

  get socket(): string {
    return this.o.socket;
  }

  private fail(error: unknown, operation: DockerOperation, image?: string): PersysError {
    return classifyDockerError(error, operation, { socket: this.o.socket, ...(image ? { image } : {}) });
  }

  private signal(ms = this.callTimeoutMs): AbortSignal {
    return AbortSignal.timeout(ms);
  }

  /** Resolves when the daemon answers `/_ping` within `timeoutMs`; RUNTIME_UNAVAILABLE otherwise. */
  async ping(timeoutMs = 3_000): Promise<void> {
    try {
      await (this.docker.ping as (opts: object) => Promise<unknown>).call(this.docker, {
        abortSignal: this.signal(timeoutMs),
      });
    } catch (error) {
      throw new PersysError(
        "RUNTIME_UNAVAILABLE",
        `Docker at ${this.o.socket} does not answer: ${dockerErrorText(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** The daemon's version and data root. */
  async info(): Promise<{ version: string; rootDir: string }> {
    try {
      const info = (await (this.docker.info as (opts: object) => Promise<unknown>).call(this.docker, {
        abortSignal: this.signal(),
      })) as { ServerVersion?: string; DockerRootDir?: string };
      return { version: info.ServerVersion ?? "", rootDir: info.DockerRootDir ?? "" };
    } catch (error) {
      throw this.fail(error, "other");
    }
  }

  /** Whether the image is on the node. */
  async hasImage(ref: string): Promise<boolean> {
    try {
      await this.docker.getImage(ref).inspect({ abortSignal: this.signal() } as never);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw this.fail(error, "inspect", ref);
    }
  }

  /**
   * Makes sure the image is on the node: present → used as is; absent → pulled (concurrent callers
   * share one pull). IMAGE_NOT_FOUND or IMAGE_PULL_FAILED with the registry's text when it cannot be.
   */
  ensureImage(ref: string): Promise<PullOutcome> {
    const running = this.pulls.get(ref);
    if (running) return running;
    const work = (async (): Promise<PullOutcome> => {
      if (await this.hasImage(ref)) return "present";
      await this.pull(ref);
      return "pulled";
    })().finally(() => this.pulls.delete(ref));
    this.pulls.set(ref, work);
    return work;
  }

  private async pull(ref: string): Promise<void> {
    this.pullAttempts++;
    let stream: Readable;
    const signal = this.signal(this.o.pullTimeoutMs);
    try {
      stream = (await this.docker.pull(ref, { abortSignal: signal })) as Readable;
    } catch (error) {
      throw this.fail(error, "pull", ref);
    }
    // Registry errors after the 200 arrive as {"error": ...} lines in the progress stream.
    const failure = await new Promise<string | undefined>((resolve, reject) => {
      let buffered = "";
      let error: string | undefined;
      stream.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        let at = buffered.indexOf("\n");
        while (at >= 0) {
          const line = buffered.slice(0, at).trim();
          buffered = buffered.slice(at + 1);
          if (line) {
            try {
              const event = JSON.parse(line) as { error?: string; errorDetail?: { message?: string } };
              if (event.error) error ??= event.errorDetail?.message || event.error;
            } catch {
              // a progress line that is not JSON: ignore
            }
          }
          at = buffered.indexOf("\n");
        }
      });
      stream.on("end", () => resolve(error));
      stream.on("error", (e) => reject(e));
    }).catch((error: unknown) => {
      throw this.fail(signal.aborted ? new Error(`no answer within ${this.o.pullTimeoutMs} ms`) : error, "pull", ref);
    });
    if (failure) throw this.fail(new Error(failure), "pull", ref);
  }

  /** Creates a container; returns its id. 409 (name in use) is rethrown as is for the caller to resolve. */
  async create(options: Docker.ContainerCreateOptions): Promise<string> {
    try {
      const container = await this.docker.createContainer(options);
      return container.id;
    } catch (error) {
      if (isConflict(error)) throw error;
      throw this.fail(error, "create", options.Image);
    }
  }

  /** Starts a container (a running one stays as it is). */
  async start(id: string): Promise<void> {
    try {
      await this.docker.getContainer(id).start();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 304) return;
      throw this.fail(error, "start");
    }
  }

  /**
   * Stops a container gracefully: SIGTERM, then SIGKILL after `timeoutSeconds` (default: the
   * container's own stop timeout). A stopped or missing one is left as it is.
   */
  async stop(id: string, timeoutSeconds?: number): Promise<void> {
    try {
      await this.docker.getContainer(id).stop(timeoutSeconds === undefined ? {} : { t: timeoutSeconds });
    } catch (error) {
      const code = (error as { statusCode?: number }).statusCode;
      if (code === 304 || code === 404) return;
      throw this.fail(error, "stop");
    }
  }

  /** Removes a container and its anonymous volumes (forcefully: a running one is killed). Idempotent. */
  async remove(id: string): Promise<void> {
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch (error) {
      if (isNotFound(error) || (isConflict(error) && /already in progress/i.test(dockerErrorText(error)))) return;
      throw this.fail(error, "remove");
    }
  }

  /** Removes a named volume. Idempotent; a volume still in use is left (and reported false). */
  async removeVolume(name: string): Promise<boolean> {
    try {
      await this.docker.getVolume(name).remove();
      return true;
    } catch (error) {
      if (isNotFound(error)) return true;
      if (isConflict(error)) return false;
      throw this.fail(error, "remove");
    }
  }

  /** The container's state, or undefined when it does not exist. */
  async inspect(idOrName: string): Promise<ContainerSnapshot | undefined> {
    try {
      return snapshotOf(await this.docker.getContainer(idOrName).inspect({ abortSignal: this.signal() }));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw this.fail(error, "inspect");
    }
  }

  /** Every container (running or not) carrying all the given labels (`key=value`). */
  async list(labels: readonly string[]): Promise<Docker.ContainerInfo[]> {
    try {
      return await this.docker.listContainers({
        all: true,
        filters: JSON.stringify({ label: labels }),
        abortSignal: this.signal(),
      });
    } catch (error) {
      throw this.fail(error, "list");
    }
  }

  /** One stats sample (Docker's one-shot mode: no second sample is waited for). */
  async sample(id: string): Promise<ContainerSample | undefined> {
    try {
      const stats = await this.docker.getContainer(id).stats({ stream: false, "one-shot": true });
      const memory = stats.memory_stats;
      const s = (memory?.stats ?? {}) as Record<string, number | undefined>;
      const inactive = s.total_inactive_file ?? s.inactive_file ?? 0;
      const usage = memory?.usage ?? 0;
      return {
        cpuNanos: stats.cpu_stats?.cpu_usage?.total_usage ?? 0,
        at: Date.parse(stats.read) || Date.now(),
        memoryBytes: Math.max(0, usage - (inactive < usage ? inactive : 0)),
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw this.fail(error, "other");
    }
  }

  /**
   * The container's log stream (Docker's multiplexed stdout/stderr frames with RFC 3339 timestamps).
   * With `follow` it stays open until the container stops or `signal` aborts.
   */
  async logs(
    id: string,
    options: { follow: boolean; tail?: number; sinceSeconds?: number; signal: AbortSignal },
  ): Promise<Readable> {
    const query: Record<string, unknown> = { stdout: true, stderr: true, timestamps: true, follow: options.follow };
    if (options.tail !== undefined) query.tail = options.tail;
    if (options.sinceSeconds !== undefined) query.since = options.sinceSeconds;
    const modem = this.docker.modem as unknown as {
      dial(opts: Record<string, unknown>, callback: (error: unknown, stream: Readable) => void): void;
    };
    return await new Promise<Readable>((resolve, reject) =>
      modem.dial(
        {
          path: `/containers/${encodeURIComponent(id)}/logs?`,
          method: "GET",
          isStream: true,
          abortSignal: options.signal,
          statusCodes: { 200: true, 404: "no such container", 500: "server error" },
          options: query,
        },
        (error, stream) => (error ? reject(isNotFound(error) ? error : this.fail(error, "other")) : resolve(stream)),
      ),
    );
  }
}
