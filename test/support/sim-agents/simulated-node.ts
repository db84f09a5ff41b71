/**
 * One simulated node: a Persys/Go-compatible agent that speaks the real wire protocol (registers and
 * heartbeats on AgentControl, serves AgentService) but runs no containers. See `index.ts` for usage.
 */
import { EventEmitter } from "node:events";
import { type ChannelCredentials, credentials, type ServerCredentials } from "@grpc/grpc-js";
import { control } from "@persys/schema";
import { killServer, type ListeningServer, listenAgentService } from "./agent-service.js";
import { ControlSession, type SessionStats } from "./control-session.js";
import { heartbeatRequest } from "./heartbeat-report.js";
import { type AgentCounters, NodeAgent, type StoppedReplica } from "./node-agent.js";
import { registerNodeRequest, type SimNodeDescription, type SimResources } from "./node-description.js";
import {
  type ApplyMatcher,
  type DeletedReplica,
  type InjectedFailure,
  ReplicaRuntime,
  type SimReplica,
} from "./replica-runtime.js";
import type { UsageModel } from "./wire-reports.js";

/** How a node is reached and how it reaches the control plane (own server, or a shared one). */
export interface NodeTransport {
  readonly controlClient: control.AgentControlClient;
  /** Makes the node's AgentService reachable; returns the `host:port` it registers with. */
  serve(nodeId: string, agent: NodeAgent): Promise<string>;
  /** Makes it unreachable (calls in flight are cancelled). */
  unserve(nodeId: string): Promise<void>;
  /** Releases what the transport holds for this node. */
  close(): Promise<void>;
}

/** Behaviour knobs of a simulated node; only `node` and `controlPlane` are required. */
export interface SimulatedNodeOptions {
  readonly node: SimNodeDescription;
  /** `host:port` of the control plane's AgentControl service. */
  readonly controlPlane: string;
  /** Overrides the interval the registration answer gives (`heartbeat_interval_seconds`). */
  readonly heartbeatIntervalMs?: number | undefined;
  /** STARTING → RUNNING after this long. Default 20 ms. */
  readonly startDelayMs?: number | undefined;
  /** A crashed replica whose policy restarts it is RUNNING again after this long. Default 100 ms. */
  readonly restartDelayMs?: number | undefined;
  /** An extra heartbeat follows a state change after this long. Default 50 ms. */
  readonly reportDebounceMs?: number | undefined;
  /**
   * Send that extra heartbeat at all. Default true. Each state change costs one heartbeat (a
   * STARTING → RUNNING pair one, when `reportDebounceMs` exceeds `startDelayMs`): at thousands of
   * applies per second that doubles the heartbeat load; false leaves reporting to the ticker.
   */
  readonly promptReports?: boolean | undefined;
  /** Share of its reservation a running replica is reported to use. Default 0.5. */
  readonly usageFactor?: number | undefined;
  readonly agentVersion?: string | undefined;
  /** Own server only: where to listen. Default 127.0.0.1, port 0 (kept across stop/start). */
  readonly listenHost?: string | undefined;
  readonly listenPort?: number | undefined;
  /** The endpoint to register with, when not the listening address (e.g. behind a proxy). */
  readonly advertisedEndpoint?: string | undefined;
  /** Host address published ports are reported on. Default the listen host. */
  readonly address?: string | undefined;
  /** Entries kept by ListActions. Default 256. */
  readonly actionLogSize?: number | undefined;
  /** Heartbeat jitter (± share of the interval). Default 0.1. */
  readonly jitter?: number | undefined;
  /** Start the first tick at a random point of the interval. Default false. */
  readonly randomPhase?: boolean | undefined;
  readonly callTimeoutMs?: number | undefined;
  /** RegisterNode retry backoff. Default 1 s doubling to 30 s. */
  readonly registerBackoff?: { readonly initialMs: number; readonly maxMs: number } | undefined;
  readonly clientCredentials?: ChannelCredentials | undefined;
  readonly serverCredentials?: ServerCredentials | undefined;
  /** Fleets pass a shared transport; default: own server and own client channel. */
  readonly transport?: NodeTransport | undefined;
}

/** Events of a node. */
export interface SimulatedNodeEvents {
  registered: [control.RegisterNodeResponse];
  heartbeat: [control.HeartbeatRequest, control.HeartbeatResponse];
  replica: [SimReplica];
  deleted: [DeletedReplica];
  rpcError: ["RegisterNode" | "Heartbeat", Error];
}

/** Serves one node on its own port, re-binding the same port after a stop. */
class OwnServerTransport implements NodeTransport {
  readonly controlClient: control.AgentControlClient;
  private listening: ListeningServer | undefined;
  private port: number;

  constructor(
    controlPlane: string,
    private readonly o: SimulatedNodeOptions,
  ) {
    this.controlClient = new control.AgentControlClient(
      controlPlane,
      o.clientCredentials ?? credentials.createInsecure(),
    );
    this.port = o.listenPort ?? 0;
  }

  async serve(_nodeId: string, agent: NodeAgent): Promise<string> {
    if (!this.listening) {
      this.listening = await listenAgentService(() => agent, {
        host: this.o.listenHost,
        port: this.port,
        credentials: this.o.serverCredentials,
      });
      this.port = this.listening.port;
    }
    return this.o.advertisedEndpoint ?? this.listening.endpoint;
  }

  async unserve(): Promise<void> {
    if (this.listening) killServer(this.listening.server);
    this.listening = undefined;
  }

  async close(): Promise<void> {
    await this.unserve();
    this.controlClient.close();
  }
}

/**
 * A simulated node. `start()` serves AgentService and registers; `stop()` makes it a dead node
 * (no server, no heartbeats) while its replicas keep their state, so `start()` again is a node
 * returning with its old copies. `close()` releases everything.
 */
export class SimulatedNode extends EventEmitter<SimulatedNodeEvents> {
  readonly id: string;
  readonly description: SimNodeDescription;
  /** The transport-free AgentService of the node (what the gRPC server calls). */
  readonly agent: NodeAgent;
  private readonly runtime: ReplicaRuntime;
  private readonly session: ControlSession;
  private readonly transport: NodeTransport;
  private readonly model: UsageModel;
  private endpointValue = "";
  private serving = false;
  /** Bumped on every replica change; the heartbeat body is rebuilt only when it moved. */
  private version = 0;
  private cached: { version: number; body: control.HeartbeatRequest } | undefined;

  constructor(options: SimulatedNodeOptions) {
    super();
    this.id = options.node.id;
    this.description = options.node;
    this.model = {
      usageFactor: options.usageFactor ?? 0.5,
      address: options.address ?? options.listenHost ?? "127.0.0.1",
    };
    this.runtime = new ReplicaRuntime(
      { startDelayMs: options.startDelayMs ?? 20, restartDelayMs: options.restartDelayMs ?? 100 },
      (event) => {
        this.version++;
        if (event.type === "replica") this.emit("replica", event.replica);
        else this.emit("deleted", event.deleted);
        this.session.requestReport();
      },
    );
    this.agent = new NodeAgent(options.node, this.runtime, this.model, {
      actionLogSize: options.actionLogSize,
      agentVersion: options.agentVersion,
    });
    this.transport = options.transport ?? new OwnServerTransport(options.controlPlane, options);
    this.session = new ControlSession({
      client: this.transport.controlClient,
      registerRequest: () =>
        registerNodeRequest(this.description, this.endpointValue, { agentVersion: options.agentVersion }),
      heartbeatRequest: () => this.heartbeatBody(),
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      reportDebounceMs: options.reportDebounceMs,
      promptReports: options.promptReports,
      jitter: options.jitter,
      randomPhase: options.randomPhase,
      callTimeoutMs: options.callTimeoutMs,
      backoff: options.registerBackoff,
      onRegistered: (res) => this.emit("registered", res),
      onHeartbeat: (req, res) => this.emit("heartbeat", req, res),
      onError: (rpc, error) => this.emit("rpcError", rpc, error),
    });
  }

  /** The heartbeat for the current replicas; only the timestamp is new when nothing changed. */
  private heartbeatBody(): control.HeartbeatRequest {
    if (this.cached?.version !== this.version) {
      this.cached = {
        version: this.version,
        body: heartbeatRequest(this.description, this.runtime.replicas(), this.model),
      };
    }
    return { ...this.cached.body, timestamp: new Date() };
  }

  /** Creates a node and starts it. */
  static async start(options: SimulatedNodeOptions): Promise<SimulatedNode> {
    const node = new SimulatedNode(options);
    await node.start();
    return node;
  }

  /** The `host:port` the node registers with (valid once started). */
  get endpoint(): string {
    return this.endpointValue;
  }

  /** Serves AgentService and starts registering/heartbeating. Resolves once the server listens. */
  async start(): Promise<void> {
    if (this.serving) return;
    this.endpointValue = await this.transport.serve(this.id, this.agent);
    this.serving = true;
    this.session.start();
  }

  /** A dead node: stops heartbeating and serving. Replicas keep their state. */
  async stop(): Promise<void> {
    this.session.stop();
    if (!this.serving) return;
    this.serving = false;
    await this.transport.unserve(this.id);
  }

  /** Stops the node for good and releases its server, channel and timers. */
  async close(): Promise<void> {
    await this.stop();
    this.runtime.dispose();
    await this.transport.close();
    this.removeAllListeners();
  }

  /** Stops heartbeats (and reports) while the node keeps serving and running its replicas. */
  pauseHeartbeats(): void {
    this.session.pause();
  }

  /** Heartbeats now, re-registering first if the lease expired meanwhile. */
  resumeHeartbeats(): void {
    this.session.resume();
  }

  /**
   * The next apply matching `matcher` (a workload id, or a predicate on the parsed assignment) that
   * starts a replica fails with `failure.code`: the replica reports FAILED with that reason (Go
   * `failure_reason`/`reason` and the `persys_replicas` extension). The node never retries it by
   * itself; only a new apply does.
   */
  failNextApply(matcher: ApplyMatcher, failure: InjectedFailure): void {
    this.runtime.failNextApply(matcher, failure);
  }

  /** Changes the share of its request each RUNNING replica reports as used, from the next heartbeat on. */
  setUsageFactor(factor: number): void {
    (this.model as { usageFactor: number }).usageFactor = factor;
    this.version++;
  }

  /**
   * Changes the node's baseline measured use (what runs outside Persys: the OS, images, logs),
   * from the next heartbeat on; replicas' use is added to it. E.g. `{ diskGiB: 12 }` as a disk fills.
   */
  setBaselineUsage(usage: Partial<SimResources>): void {
    const base = this.description.usage ?? { cpuMillicores: 0, memoryMiB: 0, diskGiB: 0 };
    (this as { description: SimNodeDescription }).description = { ...this.description, usage: { ...base, ...usage } };
    this.version++;
  }

  /** Crashes a RUNNING replica (exit 137); it restarts per its restart policy after `restartDelayMs`. */
  crashReplica(
    workloadId: string,
    index = 0,
    options: { exitCode?: number; restartDelayMs?: number } = {},
  ): SimReplica {
    return this.runtime.crash(workloadId, index, options);
  }

  /** Every replica the node runs (any state), as snapshots. */
  replicas(): SimReplica[] {
    return this.runtime.replicas();
  }

  /** One replica, or undefined when the node does not have it. */
  replica(workloadId: string, index = 0): SimReplica | undefined {
    return this.runtime.get(workloadId, index);
  }

  /** Replicas DeleteWorkload removed from this node, oldest first (fencing assertions). */
  deletions(): readonly DeletedReplica[] {
    return this.agent.deletions;
  }

  /** Replicas an apply with desired STOPPED stopped, oldest first (fencing by stop rather than delete). */
  stops(): readonly StoppedReplica[] {
    return this.agent.stops;
  }

  /** Apply/delete counters. */
  get counters(): Readonly<AgentCounters> {
    return this.agent.counters;
  }

  /** Registration and heartbeat counters. */
  get stats(): Readonly<SessionStats> {
    return this.session.stats;
  }

  /** Whether the node is serving (started and not stopped). */
  get isRunning(): boolean {
    return this.serving;
  }

  /** Whether the node holds an accepted registration. */
  get isRegistered(): boolean {
    return this.session.registered;
  }

  /** Whether heartbeats are paused. */
  get heartbeatsPaused(): boolean {
    return this.session.isPaused;
  }

  /** The heartbeat interval in force (from the registration answer or the override). */
  get heartbeatIntervalMs(): number {
    return this.session.intervalMs;
  }

  /** `drain_node` of the last heartbeat answer. */
  get drainRequested(): boolean {
    return this.session.drainRequested;
  }

  /** Resolves with the next acknowledged heartbeat that satisfies `match` (default: any). */
  nextHeartbeat(
    match: (req: control.HeartbeatRequest) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<control.HeartbeatRequest> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off("heartbeat", listener);
        reject(new Error(`node ${this.id}: no matching heartbeat within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (req: control.HeartbeatRequest) => {
        if (!match(req)) return;
        clearTimeout(timer);
        this.off("heartbeat", listener);
        resolve(req);
      };
      this.on("heartbeat", listener);
    });
  }

  /** Resolves once the node holds an accepted registration. */
  async registered(timeoutMs = 10_000): Promise<void> {
    if (this.isRegistered) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off("registered", listener);
        reject(new Error(`node ${this.id}: not registered within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = () => {
        clearTimeout(timer);
        this.off("registered", listener);
        resolve();
      };
      this.on("registered", listener);
    });
  }
}
