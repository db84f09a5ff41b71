import { type ChannelCredentials, credentials, status as grpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { control, HeartbeatChannel } from "@persys/schema";

export interface ControlSessionOptions {
  /** host:port of AgentControl servers; the next one is tried when a call cannot reach the current. */
  readonly endpoints: readonly string[];
  readonly registerRequest: () => control.RegisterNodeRequest;
  readonly heartbeatRequest: () => control.HeartbeatRequest;
  /** Overrides the interval the registration answer gives. */
  readonly intervalMs?: number | undefined;
  /** Delay of the extra heartbeat after a change (coalesces bursts). */
  readonly reportDebounceMs: number;
  readonly callTimeoutMs: number;
  readonly credentials?: ChannelCredentials;
  readonly onRegistered?: (response: control.RegisterNodeResponse, endpoint: string) => void;
  readonly onHeartbeat?: (result: "ok" | "not_found" | "error") => void;
  readonly onError?: (rpc: "RegisterNode" | "Heartbeat", error: Error, endpoint: string) => void;
}

/**
 * The agent's session with the control plane (`persys.control.v1.AgentControl`): RegisterNode, an
 * immediate heartbeat, then one per interval (the registration answer's, 10 s when it gives 0, or
 * the configured override), over one heartbeat stream where the server has it (HeartbeatChannel).
 * Re-registers when a heartbeat answers NOT_FOUND or the lease expired
 * before the next beat; retries registration with backoff (1 s doubling to 30 s) across the
 * configured endpoints. `report()` sends an extra heartbeat soon after a change, without moving
 * the periodic ticker; `reregister()` re-sends the node description (its conditions changed).
 */
export class ControlSession {
  private readonly clients = new Map<string, { control: control.AgentControlClient; heartbeats: HeartbeatChannel }>();
  private current = 0;
  private running = false;
  private registered = false;
  private inFlight = false;
  private again = false;
  private epoch = 0;
  private tick: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private backoffMs = 1_000;
  private leaseExpiresAt: Date | undefined;
  /** The heartbeat interval in force. */
  intervalMs = 10_000;
  /** `drain_node` of the last heartbeat answer. */
  drainRequested = false;

  constructor(private readonly o: ControlSessionOptions) {}

  get endpoint(): string {
    return this.o.endpoints[this.current % this.o.endpoints.length]!;
  }

  get isRegistered(): boolean {
    return this.registered;
  }

  private client(): control.AgentControlClient {
    return this.connection().control;
  }

  /** The clients for the current endpoint: AgentControl, and its heartbeat stream on the same channel. */
  private connection(): { control: control.AgentControlClient; heartbeats: HeartbeatChannel } {
    const endpoint = this.endpoint;
    let c = this.clients.get(endpoint);
    if (!c) {
      const client = new control.AgentControlClient(endpoint, this.o.credentials ?? credentials.createInsecure(), {
        "grpc.keepalive_time_ms": 30_000,
        "grpc.max_reconnect_backoff_ms": 2_000,
        "grpc.initial_reconnect_backoff_ms": 200,
      });
      c = { control: client, heartbeats: new HeartbeatChannel(client, { timeoutMs: this.o.callTimeoutMs }) };
      this.clients.set(endpoint, c);
    }
    return c;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.register();
  }

  stop(): void {
    this.running = false;
    this.epoch++;
    clearTimeout(this.tick);
    clearTimeout(this.debounce);
    for (const c of this.clients.values()) {
      c.heartbeats.close();
      c.control.close();
    }
    this.clients.clear();
  }

  /** Sends an extra heartbeat soon (debounced); one in flight is followed by another. */
  report(): void {
    if (!this.running || !this.registered) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.heartbeat();
    }, this.o.reportDebounceMs);
    this.debounce.unref();
  }

  /** Registers again now (the node description changed); heartbeats continue after it. */
  reregister(): void {
    if (!this.running) return;
    this.epoch++;
    this.inFlight = false;
    this.register();
  }

  private options() {
    return { deadline: Date.now() + this.o.callTimeoutMs };
  }

  private register(): void {
    if (!this.running) return;
    clearTimeout(this.tick);
    this.registered = false;
    const epoch = ++this.epoch;
    const endpoint = this.endpoint;
    this.client().registerNode(this.o.registerRequest(), new Metadata(), this.options(), (error, response) => {
      if (epoch !== this.epoch) return;
      if (error || !response.accepted) {
        const e = error ?? new Error(`registration not accepted: ${response.reason}`);
        this.o.onError?.("RegisterNode", e, endpoint);
        if (error && isUnreachable(error)) this.current++;
        this.tick = setTimeout(() => this.register(), this.backoffMs);
        this.tick.unref();
        this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
        return;
      }
      this.backoffMs = 1_000;
      this.registered = true;
      this.intervalMs =
        this.o.intervalMs ??
        (response.heartbeatIntervalSeconds > 0 ? response.heartbeatIntervalSeconds * 1000 : 10_000);
      this.leaseExpiresAt = response.leaseExpiresAt;
      this.o.onRegistered?.(response, endpoint);
      this.schedule();
      this.heartbeat();
    });
  }

  private schedule(): void {
    clearTimeout(this.tick);
    this.tick = setTimeout(() => {
      this.schedule();
      if (!this.inFlight) this.heartbeat();
    }, this.intervalMs);
    this.tick.unref();
  }

  private heartbeat(): void {
    if (!this.running || !this.registered) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    clearTimeout(this.debounce);
    this.debounce = undefined;
    if (this.leaseExpiresAt && Date.now() > this.leaseExpiresAt.getTime()) {
      this.register();
      return;
    }
    this.inFlight = true;
    this.again = false;
    const epoch = this.epoch;
    const endpoint = this.endpoint;
    this.connection().heartbeats.send(this.o.heartbeatRequest(), (error, response) => {
      if (epoch !== this.epoch) return;
      this.inFlight = false;
      if (error?.code === grpcStatus.NOT_FOUND) {
        this.o.onHeartbeat?.("not_found");
        this.register();
        return;
      }
      if (error) {
        this.o.onHeartbeat?.("error");
        this.o.onError?.("Heartbeat", error, endpoint);
        if (isUnreachable(error) && this.o.endpoints.length > 1) {
          this.current++;
          this.register();
          return;
        }
      } else {
        this.o.onHeartbeat?.("ok");
        this.leaseExpiresAt = response?.leaseExpiresAt ?? this.leaseExpiresAt;
        this.drainRequested = response?.drainNode ?? false;
      }
      if (this.again) {
        this.again = false;
        this.report();
      }
    });
  }
}

function isUnreachable(error: ServiceError): boolean {
  return error.code === grpcStatus.UNAVAILABLE || error.code === grpcStatus.DEADLINE_EXCEEDED;
}
