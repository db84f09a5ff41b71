/**
 * Many simulated nodes in one process, for load tests and benchmarks. `per-node`: every node has its
 * own AgentService port and control-plane channel (faithful, for tens of nodes). `shared`: one
 * server and one channel for all nodes; AgentService calls are routed by the `persys-node-id` header
 * and every node registers the shared endpoint as its `grpc_endpoint`.
 */
import { type ChannelCredentials, credentials, type ServerCredentials } from "@grpc/grpc-js";
import { control } from "@persys/schema";
import { killServer, type ListeningServer, listenAgentService, NodeRouter } from "./agent-service.js";
import type { SessionStats } from "./control-session.js";
import type { NodeAgent } from "./node-agent.js";
import type { SimNodeDescription } from "./node-description.js";
import type { ReplicaStateName, SimReplica } from "./replica-runtime.js";
import { type NodeTransport, SimulatedNode, type SimulatedNodeOptions } from "./simulated-node.js";

/** How the fleet's nodes are reached. */
export type EndpointMode = "per-node" | "shared";

/** Options of `startFleet`. */
export interface FleetOptions {
  /** `host:port` of the control plane's AgentControl service. */
  readonly controlPlane: string;
  readonly nodes: readonly SimNodeDescription[];
  /** Overrides the interval of the registration answers. */
  readonly heartbeatIntervalMs?: number | undefined;
  /** STARTING → RUNNING delay of every replica. Default 20 ms. */
  readonly startDelayMs?: number | undefined;
  /** Default `per-node`. */
  readonly endpointMode?: EndpointMode | undefined;
  /** Nodes start (register) spread evenly over this long. Default 1 ms per node, at most one interval. */
  readonly rampUpMs?: number | undefined;
  /** Resolve only once every node is registered. Default true. */
  readonly waitForRegistration?: boolean | undefined;
  /** Default 60 s plus the ramp-up. */
  readonly registrationTimeoutMs?: number | undefined;
  /** Shared mode: where the shared server listens. Default 127.0.0.1, a free port. */
  readonly sharedHost?: string | undefined;
  readonly sharedPort?: number | undefined;
  readonly clientCredentials?: ChannelCredentials | undefined;
  readonly serverCredentials?: ServerCredentials | undefined;
  /** Other knobs applied to every node (debounce, jitter, restart delay, ...). */
  readonly nodeOptions?: Partial<Omit<SimulatedNodeOptions, "node" | "controlPlane" | "transport">> | undefined;
}

/** Totals over a fleet. */
export interface FleetStats extends SessionStats {
  readonly nodes: number;
  readonly running: number;
  readonly registered: number;
  readonly applied: number;
  readonly deleted: number;
  readonly replicas: Readonly<Record<ReplicaStateName, number>>;
}

/** One server and one control-plane channel shared by many nodes. */
class SharedEndpoint {
  readonly controlClient: control.AgentControlClient;

  private constructor(
    readonly router: NodeRouter,
    readonly listening: ListeningServer,
    controlPlane: string,
    channelCredentials: ChannelCredentials,
  ) {
    this.controlClient = new control.AgentControlClient(controlPlane, channelCredentials);
  }

  static async open(o: FleetOptions): Promise<SharedEndpoint> {
    const router = new NodeRouter();
    const listening = await listenAgentService(router.resolve, {
      host: o.sharedHost,
      port: o.sharedPort,
      credentials: o.serverCredentials,
    });
    return new SharedEndpoint(router, listening, o.controlPlane, o.clientCredentials ?? credentials.createInsecure());
  }

  transport(): NodeTransport {
    return {
      controlClient: this.controlClient,
      serve: async (nodeId: string, agent: NodeAgent) => {
        this.router.attach(nodeId, agent);
        return this.listening.endpoint;
      },
      unserve: async (nodeId: string) => this.router.detach(nodeId),
      close: async () => {},
    };
  }

  close(): void {
    killServer(this.listening.server);
    this.controlClient.close();
  }
}

/** A started fleet of simulated nodes. */
export class SimulatedFleet {
  private readonly byId: Map<string, SimulatedNode>;

  constructor(
    readonly nodes: readonly SimulatedNode[],
    private readonly shared: SharedEndpoint | undefined,
  ) {
    this.byId = new Map(nodes.map((n) => [n.id, n]));
  }

  /** The shared AgentService endpoint (shared mode), else undefined. */
  get endpoint(): string | undefined {
    return this.shared?.listening.endpoint;
  }

  /** One node by id; throws for an unknown id. */
  node(id: string): SimulatedNode {
    const node = this.byId.get(id);
    if (!node) throw new Error(`no simulated node ${id} in this fleet`);
    return node;
  }

  /** Every replica of every node, with its node id. */
  replicas(): (SimReplica & { nodeId: string })[] {
    return this.nodes.flatMap((n) => n.replicas().map((r) => ({ ...r, nodeId: n.id })));
  }

  /** Totals over all nodes. */
  stats(): FleetStats {
    const replicas: Record<ReplicaStateName, number> = { STARTING: 0, RUNNING: 0, STOPPED: 0, FAILED: 0 };
    const t = {
      registrations: 0,
      registrationFailures: 0,
      heartbeats: 0,
      heartbeatFailures: 0,
      notFound: 0,
      leaseExpired: 0,
      promptReports: 0,
      running: 0,
      registered: 0,
      applied: 0,
      deleted: 0,
    };
    for (const n of this.nodes) {
      for (const k of Object.keys(n.stats) as (keyof SessionStats)[]) t[k] += n.stats[k];
      if (n.isRunning) t.running++;
      if (n.isRegistered) t.registered++;
      t.applied += n.counters.applied;
      t.deleted += n.counters.deleted;
      for (const r of n.replicas()) replicas[r.state]++;
    }
    return { ...t, nodes: this.nodes.length, replicas };
  }

  /** Stops every node and releases servers and channels. */
  async close(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.close()));
    this.shared?.close();
  }
}

/**
 * Starts simulated nodes for every description, spreading their registrations over `rampUpMs` and
 * their heartbeats over the interval (a random first tick, then interval ± 10 %), and by default
 * waits until all are registered.
 */
export async function startFleet(options: FleetOptions): Promise<SimulatedFleet> {
  const mode = options.endpointMode ?? "per-node";
  const shared = mode === "shared" ? await SharedEndpoint.open(options) : undefined;
  const count = options.nodes.length;
  const rampUpMs = options.rampUpMs ?? Math.min(count, options.heartbeatIntervalMs ?? 10_000);
  const nodes = options.nodes.map(
    (node) =>
      new SimulatedNode({
        randomPhase: true,
        ...options.nodeOptions,
        node,
        controlPlane: options.controlPlane,
        heartbeatIntervalMs: options.heartbeatIntervalMs,
        startDelayMs: options.startDelayMs,
        clientCredentials: options.clientCredentials,
        serverCredentials: options.serverCredentials,
        transport: shared?.transport(),
      }),
  );
  const fleet = new SimulatedFleet(nodes, shared);
  try {
    await Promise.all(
      nodes.map(
        (node, i) =>
          new Promise<void>((resolve, reject) => {
            setTimeout(() => node.start().then(resolve, reject), count > 1 ? (i * rampUpMs) / count : 0);
          }),
      ),
    );
    if (options.waitForRegistration ?? true) {
      const timeout = options.registrationTimeoutMs ?? 60_000 + rampUpMs;
      await Promise.all(nodes.map((n) => n.registered(timeout)));
    }
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return fleet;
}
