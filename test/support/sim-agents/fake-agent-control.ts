/**
 * A small fake of the control plane's `persys.control.v1.AgentControl` (RegisterNode and Heartbeat
 * only; the other RPCs answer UNIMPLEMENTED): a real gRPC server that records what agents send and
 * answers as the Go scheduler does (interval, lease; NOT_FOUND for a heartbeat of an unknown node).
 */
import { status as grpcStatus, Server, ServerCredentials } from "@grpc/grpc-js";
import { control } from "@persys/schema";

/** What the fake knows of one node. */
export interface FakeNodeRecord {
  registration: control.RegisterNodeRequest;
  registrations: number;
  heartbeats: number;
  lastHeartbeat?: control.HeartbeatRequest | undefined;
  lastHeartbeatAt?: number | undefined;
}

/** Options of the fake. */
export interface FakeAgentControlOptions {
  /** Answered in RegisterNodeResponse. Default 60, as the Go scheduler. */
  readonly heartbeatIntervalSeconds?: number;
  /** Lease granted by registration and by each heartbeat. Default 180 s. */
  readonly leaseMs?: number;
  /** Keep every request (tests). False keeps only counts and the last heartbeat per node (load runs). */
  readonly recordAll?: boolean;
  readonly host?: string;
  readonly port?: number;
}

/** A fake AgentControl server. */
export class FakeAgentControl {
  /** Every registration, in arrival order (when `recordAll`). */
  readonly registrations: control.RegisterNodeRequest[] = [];
  /** Every heartbeat, in arrival order (when `recordAll`). */
  readonly heartbeats: control.HeartbeatRequest[] = [];
  readonly nodes = new Map<string, FakeNodeRecord>();
  heartbeatCount = 0;
  registrationCount = 0;
  /** Called for every heartbeat received (before answering). */
  onHeartbeat: ((req: control.HeartbeatRequest) => void) | undefined;
  /** Registrations are refused (`accepted=false`) with this reason while set. */
  rejectReason: string | undefined;
  /** Lease granted from now on. */
  leaseMs: number;
  private readonly drains = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly address: string,
    private readonly o: FakeAgentControlOptions,
  ) {
    this.leaseMs = o.leaseMs ?? 180_000;
  }

  /** Starts the fake on a free loopback port. */
  static async start(options: FakeAgentControlOptions = {}): Promise<FakeAgentControl> {
    const server = new Server();
    const host = options.host ?? "127.0.0.1";
    const port = await new Promise<number>((ok, fail) =>
      server.bindAsync(`${host}:${options.port ?? 0}`, ServerCredentials.createInsecure(), (e, p) =>
        e ? fail(e) : ok(p),
      ),
    );
    const fake = new FakeAgentControl(server, `${host}:${port}`, options);
    server.addService(control.AgentControlService, {
      registerNode: (call, callback) => callback(null, fake.register(call.request)),
      heartbeat: (call, callback) => {
        const res = fake.heartbeat(call.request);
        if (res) callback(null, res);
        else callback({ code: grpcStatus.NOT_FOUND, details: `node ${call.request.nodeId} not found` });
      },
    } satisfies Partial<control.AgentControlServer> as control.AgentControlServer);
    return fake;
  }

  /** Forgets a node, as after a control-plane data loss: its heartbeats answer NOT_FOUND until it registers. */
  forget(nodeId: string): void {
    this.nodes.delete(nodeId);
  }

  /** Sets `drain_node` in the node's heartbeat answers. */
  setDrain(nodeId: string, drain: boolean): void {
    if (drain) this.drains.add(nodeId);
    else this.drains.delete(nodeId);
  }

  /** The heartbeats of one node (when `recordAll`). */
  heartbeatsOf(nodeId: string): control.HeartbeatRequest[] {
    return this.heartbeats.filter((h) => h.nodeId === nodeId);
  }

  /** The registrations of one node (when `recordAll`). */
  registrationsOf(nodeId: string): control.RegisterNodeRequest[] {
    return this.registrations.filter((r) => r.nodeId === nodeId);
  }

  /** The last heartbeat of a node. */
  lastHeartbeat(nodeId: string): control.HeartbeatRequest | undefined {
    return this.nodes.get(nodeId)?.lastHeartbeat;
  }

  /** Stops the server now. */
  close(): void {
    this.server.forceShutdown();
  }

  private lease(): Date {
    return new Date(Date.now() + this.leaseMs);
  }

  private register(req: control.RegisterNodeRequest): control.RegisterNodeResponse {
    if (this.o.recordAll ?? true) this.registrations.push(req);
    this.registrationCount++;
    if (this.rejectReason !== undefined) {
      return { accepted: false, reason: this.rejectReason, heartbeatIntervalSeconds: 0, leaseExpiresAt: undefined };
    }
    const known = this.nodes.get(req.nodeId);
    this.nodes.set(req.nodeId, {
      registration: req,
      registrations: (known?.registrations ?? 0) + 1,
      heartbeats: known?.heartbeats ?? 0,
      lastHeartbeat: known?.lastHeartbeat,
      lastHeartbeatAt: known?.lastHeartbeatAt,
    });
    return {
      accepted: true,
      reason: "",
      heartbeatIntervalSeconds: this.o.heartbeatIntervalSeconds ?? 60,
      leaseExpiresAt: this.lease(),
    };
  }

  private heartbeat(req: control.HeartbeatRequest): control.HeartbeatResponse | undefined {
    this.heartbeatCount++;
    if (this.o.recordAll ?? true) this.heartbeats.push(req);
    this.onHeartbeat?.(req);
    const node = this.nodes.get(req.nodeId);
    if (!node) return undefined;
    node.heartbeats++;
    node.lastHeartbeat = req;
    node.lastHeartbeatAt = Date.now();
    return { acknowledged: true, drainNode: this.drains.has(req.nodeId), leaseExpiresAt: this.lease() };
  }
}
