import type { Readable } from "node:stream";
import type { DockerRuntime } from "./docker-runtime.js";

/** One container event from the Docker events stream. */
export interface ContainerEvent {
  /** `create`, `start`, `die`, `kill`, `oom`, `stop`, `destroy`, `health_status: unhealthy`, ... */
  readonly action: string;
  readonly id: string;
  /** The container's labels (and Docker's `name`, `image`, `exitCode` attributes). */
  readonly attributes: Readonly<Record<string, string>>;
  readonly timeNano: bigint;
}

export interface DockerEventStreamOptions {
  /** Only containers carrying all these labels (`key=value`). */
  readonly labels: readonly string[];
  readonly onEvent: (event: ContainerEvent) => void;
  /** The stream is (re)connected: events may have been missed before, so resynchronise. */
  readonly onConnected: () => void;
  /** The stream broke (daemon stopped or unreachable); it reconnects by itself. */
  readonly onDisconnected: (error: unknown) => void;
  /** Reconnect backoff. Default 200 ms doubling to 5 s. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
}

/** Parses one line of the events stream; undefined for what is not a container event. */
export function parseContainerEvent(line: string): ContainerEvent | undefined {
  let raw: {
    Type?: string;
    Action?: string;
    Actor?: { ID?: string; Attributes?: Record<string, string> };
    timeNano?: number | string;
    time?: number;
  };
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (raw.Type !== "container" || !raw.Action || !raw.Actor?.ID) return undefined;
  let timeNano: bigint;
  try {
    timeNano = BigInt(raw.timeNano ?? (raw.time ?? 0) * 1e9);
  } catch {
    timeNano = 0n;
  }
  return { action: raw.Action, id: raw.Actor.ID, attributes: raw.Actor.Attributes ?? {}, timeNano };
}

/**
 * Follows Docker's events stream for this node's containers, reconnecting with backoff when the
 * daemon goes away. After a reconnect it asks for the events since the last one it saw, and calls
 * `onConnected` so the caller resynchronises anyway (the daemon may have restarted).
 */
export class DockerEventStream {
  private running = false;
  private stream: Readable | undefined;
  private abort: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastNano = 0n;
  private delayMs: number;
  /** Whether the stream is connected now. */
  connected = false;

  constructor(
    private readonly runtime: DockerRuntime,
    private readonly o: DockerEventStreamOptions,
  ) {
    this.delayMs = o.backoff?.initialMs ?? 200;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.abort?.abort();
    this.stream?.destroy();
    this.connected = false;
  }

  private async connect(): Promise<void> {
    if (!this.running) return;
    this.abort = new AbortController();
    const since =
      this.lastNano > 0n
        ? `${this.lastNano / 1_000_000_000n}.${String(this.lastNano % 1_000_000_000n).padStart(9, "0")}`
        : undefined;
    try {
      const stream = (await this.runtime.docker.getEvents({
        filters: { type: ["container"], label: [...this.o.labels] },
        ...(since ? { since } : {}),
        abortSignal: this.abort.signal,
      } as never)) as unknown as Readable;
      if (!this.running) {
        stream.destroy();
        return;
      }
      this.stream = stream;
      this.connected = true;
      this.delayMs = this.o.backoff?.initialMs ?? 200;
      this.o.onConnected();
      let buffered = "";
      stream.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        let at = buffered.indexOf("\n");
        while (at >= 0) {
          const event = parseContainerEvent(buffered.slice(0, at));
          buffered = buffered.slice(at + 1);
          if (event) {
            if (event.timeNano > this.lastNano) this.lastNano = event.timeNano;
            this.o.onEvent(event);
          }
          at = buffered.indexOf("\n");
        }
      });
      const ended = (error?: unknown) => {
        if (this.stream !== stream) return;
        this.stream = undefined;
        this.connected = false;
        if (!this.running) return;
        this.o.onDisconnected(error ?? new Error("the Docker events stream ended"));
        this.retry();
      };
      stream.on("error", ended);
      stream.on("end", () => ended());
      stream.on("close", () => ended());
    } catch (error) {
      if (!this.running) return;
      this.connected = false;
      this.o.onDisconnected(error);
      this.retry();
    }
  }

  private retry(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, this.o.backoff?.maxMs ?? 5_000);
  }
}
