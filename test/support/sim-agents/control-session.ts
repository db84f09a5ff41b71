/**
 * A simulated agent's session with `persys.control.v1.AgentControl`, following the Go compute-agent
 * (spec §5.1, §3.5): RegisterNode, an immediate heartbeat, then one every `heartbeat_interval_seconds`
 * (10 s when the answer gives 0); re-register when the lease has expired or a heartbeat answers
 * NOT_FOUND; registration retried with a backoff doubling from 1 s to 30 s. Beyond the Go agent:
 * an extra heartbeat shortly (debounced) after a replica changes state, jitter on every tick, and,
 * as the Persys agent, heartbeats over one stream where the control plane serves it (else unary).
 */
import { status as grpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { type control, HeartbeatChannel } from "@persys/schema";

/** Counters of one session. */
export interface SessionStats {
  /** Accepted registrations (the first one and every re-registration). */
  registrations: number;
  /** Registrations that failed or were not accepted. */
  registrationFailures: number;
  /** Heartbeats acknowledged. */
  heartbeats: number;
  /** Heartbeats that failed for another reason than NOT_FOUND. */
  heartbeatFailures: number;
  /** Heartbeats answered NOT_FOUND (the control plane forgot the node), each followed by a registration. */
  notFound: number;
  /** Re-registrations because the lease had expired before a heartbeat was due. */
  leaseExpired: number;
  /** Heartbeats sent early because a replica changed state. */
  promptReports: number;
}

/** Configuration of a session. */
export interface SessionOptions {
  readonly client: control.AgentControlClient;
  readonly registerRequest: () => control.RegisterNodeRequest;
  readonly heartbeatRequest: () => control.HeartbeatRequest;
  /** Overrides `heartbeat_interval_seconds` of the registration answer (tests, load runs). */
  readonly heartbeatIntervalMs?: number | undefined;
  /** Delay of the extra heartbeat after a state change. Default 50 ms. */
  readonly reportDebounceMs?: number | undefined;
  /** Send extra heartbeats on state changes at all. Default true; false: only the ticker reports. */
  readonly promptReports?: boolean | undefined;
  /** Each tick is the interval × (1 ± jitter). Default 0.1. */
  readonly jitter?: number | undefined;
  /** Start the first tick after registration at a random point of the interval (spreads a fleet). */
  readonly randomPhase?: boolean | undefined;
  /** Deadline of each call. Default 10 s, as the Go agent. */
  readonly callTimeoutMs?: number | undefined;
  /** Registration retry backoff. Default 1 s doubling to 30 s. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number } | undefined;
  readonly onRegistered?: ((res: control.RegisterNodeResponse) => void) | undefined;
  readonly onHeartbeat?: ((req: control.HeartbeatRequest, res: control.HeartbeatResponse) => void) | undefined;
  readonly onError?: ((rpc: "RegisterNode" | "Heartbeat", error: ServiceError | Error) => void) | undefined;
}

type Phase = "idle" | "registering" | "registered";

/**
 * Runs `start` with stack capture off: grpc-js records `new Error()` at every call for its error
 * stacks, a sizeable share of a heartbeat's client-side CPU; the errors still carry code and details.
 */
function withoutCallerStack(start: () => void): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The register/heartbeat loop of one node. */
export class ControlSession {
  readonly stats: SessionStats = {
    registrations: 0,
    registrationFailures: 0,
    heartbeats: 0,
    heartbeatFailures: 0,
    notFound: 0,
    leaseExpired: 0,
    promptReports: 0,
  };
  /** The heartbeat interval in force. */
  intervalMs = 10_000;
  /** Lease expiry from the last answer. */
  leaseExpiresAt: Date | undefined;
  /** `drain_node` of the last heartbeat answer. */
  drainRequested = false;

  private phase: Phase = "idle";
  private running = false;
  private paused = false;
  private inFlight = false;
  private again = false;
  private epoch = 0;
  private tick: NodeJS.Timeout | undefined;
  private report: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private readonly heartbeats: HeartbeatChannel;

  constructor(private readonly o: SessionOptions) {
    this.backoffMs = o.backoff?.initialMs ?? 1000;
    this.heartbeats = new HeartbeatChannel(o.client, { timeoutMs: o.callTimeoutMs ?? 10_000 });
  }

  /** Whether the session is registered and heartbeating. */
  get registered(): boolean {
    return this.phase === "registered";
  }

  /** Whether heartbeats are paused. */
  get isPaused(): boolean {
    return this.paused;
  }

  /** Registers and starts heartbeating. No-op when running. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.epoch++;
    this.register();
  }

  /** Stops every call and timer; answers of calls in flight are ignored. */
  stop(): void {
    this.running = false;
    this.epoch++;
    this.inFlight = false;
    this.phase = "idle";
    this.clearTimers();
    this.heartbeats.close();
  }

  /** Stops sending anything (heartbeats, reports, registration retries) until `resume`. */
  pause(): void {
    this.paused = true;
    this.clearTimers();
  }

  /** Heartbeats now (re-registering first when the lease expired meanwhile), then on the ticker. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (!this.running) return;
    if (this.phase === "registered") {
      this.startTicker(this.nextTickDelay());
      this.heartbeat();
    } else if (this.phase === "idle") this.register();
  }

  /**
   * Asks for an extra heartbeat soon (debounced): a replica changed state. The periodic ticker keeps
   * its phase, so prompt reports do not bunch a fleet's heartbeats together.
   */
  requestReport(): void {
    if (!this.running || this.paused || this.phase !== "registered" || this.o.promptReports === false) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    if (this.report) return;
    this.report = setTimeout(() => {
      this.report = undefined;
      this.stats.promptReports++;
      this.heartbeat();
    }, this.o.reportDebounceMs ?? 50);
    this.report.unref();
  }

  private deadline(): { deadline: number } {
    return { deadline: Date.now() + (this.o.callTimeoutMs ?? 10_000) };
  }

  private register(): void {
    if (!this.running || this.paused) return;
    this.clearTimers();
    this.phase = "registering";
    const epoch = this.epoch;
    const req = this.o.registerRequest();
    withoutCallerStack(() =>
      this.o.client.registerNode(req, new Metadata(), this.deadline(), (err, res) => {
        if (epoch !== this.epoch) return;
        if (err || !res.accepted) {
          this.stats.registrationFailures++;
          this.o.onError?.("RegisterNode", err ?? new Error(`registration not accepted: ${res.reason}`));
          this.phase = "idle";
          if (!this.paused) {
            this.tick = setTimeout(() => this.register(), this.backoffMs);
            this.tick.unref();
          }
          this.backoffMs = Math.min(this.backoffMs * 2, this.o.backoff?.maxMs ?? 30_000);
          return;
        }
        this.backoffMs = this.o.backoff?.initialMs ?? 1000;
        this.phase = "registered";
        this.intervalMs =
          this.o.heartbeatIntervalMs ??
          (res.heartbeatIntervalSeconds > 0 ? res.heartbeatIntervalSeconds * 1000 : 10_000);
        this.leaseExpiresAt = res.leaseExpiresAt;
        this.stats.registrations++;
        this.o.onRegistered?.(res);
        if (this.paused) return;
        this.startTicker(this.o.randomPhase ? Math.random() * this.intervalMs : this.nextTickDelay());
        this.heartbeat();
      }),
    );
  }

  private heartbeat(): void {
    if (!this.running || this.paused || this.phase !== "registered") return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    clearTimeout(this.report);
    this.report = undefined;
    if (this.leaseExpiresAt && Date.now() > this.leaseExpiresAt.getTime()) {
      this.stats.leaseExpired++;
      this.register();
      return;
    }
    this.inFlight = true;
    this.again = false;
    const epoch = this.epoch;
    const req = this.o.heartbeatRequest();
    withoutCallerStack(() =>
      this.heartbeats.send(req, (err, res) => {
        if (epoch !== this.epoch) return;
        this.inFlight = false;
        if (err?.code === grpcStatus.NOT_FOUND) {
          this.stats.notFound++;
          this.phase = "idle";
          this.register();
          return;
        }
        if (err) {
          this.stats.heartbeatFailures++;
          this.o.onError?.("Heartbeat", err);
        } else {
          this.stats.heartbeats++;
          this.leaseExpiresAt = res!.leaseExpiresAt ?? this.leaseExpiresAt;
          this.drainRequested = res!.drainNode;
          this.o.onHeartbeat?.(req, res!);
        }
        if (this.again) {
          this.again = false;
          this.requestReport();
        }
      }),
    );
  }

  /** Interval × (1 ± jitter). */
  private nextTickDelay(): number {
    const jitter = this.o.jitter ?? 0.1;
    return this.intervalMs * (1 + jitter * (2 * Math.random() - 1));
  }

  /** The periodic ticker: first tick after `firstDelayMs`, then every interval ± jitter. */
  private startTicker(firstDelayMs: number): void {
    clearTimeout(this.tick);
    this.tick = setTimeout(() => {
      this.startTicker(this.nextTickDelay());
      if (!this.inFlight) this.heartbeat(); // a slow answer skips a tick rather than piling up
    }, firstDelayMs);
    this.tick.unref();
  }

  private clearTimers(): void {
    clearTimeout(this.tick);
    clearTimeout(this.report);
    this.tick = undefined;
    this.report = undefined;
  }
}
