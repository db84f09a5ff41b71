import { type handleBidiStreamingCall, Server, ServerCredentials, type ServerOptions, status } from "@grpc/grpc-js";
import { api, control, heartbeat } from "@persys/schema";
import type { Logger } from "pino";
import type { ApiMetrics } from "../metrics.js";
import type { AgentControlApi, PersysApi, ServerHealth } from "../persys-api.js";
import type { GrpcIdentify } from "./call-context.js";
import { bindService, type HandlerDeps } from "./grpc-handlers.js";
import { GrpcHealth } from "./grpc-health.js";
import { addReflection } from "./grpc-reflection.js";
import { HeartbeatStreams } from "./heartbeat-streams.js";

export interface GrpcServerOptions {
  /** `host:port` to bind, e.g. `0.0.0.0:7443` or `127.0.0.1:0` (a free port). */
  readonly address: string;
  /** Serves persys.api.v1 (WorkloadService, NodeService, ClusterService, EventService, IntelligenceService, AutomationService) when given. */
  readonly api?: PersysApi;
  /** Serves persys.control.v1.AgentControl (and persys.heartbeat.v1.HeartbeatService) when given. */
  readonly agentControl?: AgentControlApi;
  /** Drives gRPC health checking. */
  readonly health: ServerHealth;
  /** Logs unexpected handler failures. Default: none. */
  readonly logger?: Logger;
  /** Default: insecure (plaintext). Pass `ServerCredentials.createSsl(...)` for (m)TLS. */
  readonly credentials?: ServerCredentials;
  /** Per-method call counts and latencies. */
  readonly metrics?: ApiMetrics;
  /** Caller credentials for CallContext.credentials. Default: verified client certificate subject and bearer token. */
  readonly identify?: GrpcIdentify;
  /** How often the health status is re-read from `health` (ms). Default 1000. */
  readonly healthIntervalMs?: number;
  /** Serve gRPC server reflection. Default true. */
  readonly reflection?: boolean;
  /** grpc-js server options (message sizes, keepalive). */
  readonly serverOptions?: ServerOptions;
}

/** A listening gRPC server. */
export interface RunningGrpcServer {
  /** The bound port (the free port chosen when the address asked for port 0). */
  readonly port: number;
  readonly server: Server;
  readonly health: GrpcHealth;
  /**
   * Reports NOT_SERVING, lets calls in flight finish for up to `graceMs` (default 5000), then cancels
   * the rest (open streams included). Resolves when the server is down; idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

/** Go's generated `UnimplementedAgentControlServer` text for the reserved stream. */
const CONTROL_STREAM_UNIMPLEMENTED = "method ControlStream not implemented";

const publicServices = [
  "persys.api.v1.WorkloadService",
  "persys.api.v1.NodeService",
  "persys.api.v1.ClusterService",
  "persys.api.v1.EventService",
  "persys.api.v1.IntelligenceService",
  "persys.api.v1.AutomationService",
  "persys.api.v1.SecretService",
  "persys.api.v1.SecurityService",
];

/**
 * Starts the control plane's gRPC server: the public API, the Go-compatible AgentControl service
 * (ControlStream answers UNIMPLEMENTED, as the Go scheduler does) with the heartbeat stream of Persys
 * agents beside it, gRPC health checking and server reflection. Handlers only translate: they pass the decoded request and a CallContext to the core,
 * and map a thrown PersysError to the registry's gRPC status with the `persys-error-bin` trailer.
 *
 * @throws Error when the address cannot be bound (the server is shut down first).
 */
export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  if (!options.api && !options.agentControl) throw new Error("startGrpcServer needs api, agentControl or both");
  const server = new Server(options.serverOptions);
  const deps: HandlerDeps = {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.identify ? { identify: options.identify } : {}),
  };
  const served: string[] = [];
  let heartbeats: HeartbeatStreams | undefined;
  const core = options.api;
  if (core) {
    // One call per service, so the compiler checks that PersysApi has a method for every RPC.
    server.addService(api.WorkloadServiceService, bindService(api.WorkloadServiceService, core, deps));
    server.addService(api.NodeServiceService, bindService(api.NodeServiceService, core, deps));
    server.addService(api.ClusterServiceService, bindService(api.ClusterServiceService, core, deps));
    server.addService(api.EventServiceService, bindService(api.EventServiceService, core, deps));
    server.addService(api.IntelligenceServiceService, bindService(api.IntelligenceServiceService, core, deps));
    server.addService(api.AutomationServiceService, bindService(api.AutomationServiceService, core, deps));
    server.addService(api.SecretServiceService, bindService(api.SecretServiceService, core, deps));
    server.addService(api.SecurityServiceService, bindService(api.SecurityServiceService, core, deps));
    served.push(...publicServices);
  }
  if (options.agentControl) {
    const handlers = bindService(control.AgentControlService, options.agentControl, deps, ["controlStream"]);
    server.addService(control.AgentControlService, { ...handlers, controlStream: unimplementedStream });
    heartbeats = new HeartbeatStreams(options.agentControl, deps);
    server.addService(heartbeat.HeartbeatServiceService, heartbeats.handlers());
    served.push("persys.control.v1.AgentControl", "persys.heartbeat.v1.HeartbeatService");
  }
  const health = new GrpcHealth(options.health, served, options.healthIntervalMs);
  health.addToServer(server);
  if (options.reflection !== false) addReflection(server);

  const port = await bind(server, options.address, options.credentials ?? ServerCredentials.createInsecure());
  health.start();
  let closing: Promise<void> | undefined;
  return {
    port,
    server,
    health,
    close: (graceMs = 5000) => {
      closing ??= shutdown(server, health, graceMs, heartbeats);
      return closing;
    },
  };
}

const unimplementedStream: handleBidiStreamingCall<control.ControlMessage, control.ControlMessage> = (call) => {
  call.emit("error", { code: status.UNIMPLEMENTED, details: CONTROL_STREAM_UNIMPLEMENTED });
};

function bind(server: Server, address: string, credentials: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) => {
      if (error) {
        server.forceShutdown();
        reject(new Error(`cannot bind gRPC server to ${address}: ${error.message}`, { cause: error }));
      } else resolve(port);
    });
  });
}

function shutdown(
  server: Server,
  health: GrpcHealth,
  graceMs: number,
  heartbeats: HeartbeatStreams | undefined,
): Promise<void> {
  health.stop();
  // Heartbeat streams never end by themselves; agents reopen theirs on their next beat.
  heartbeats?.endAll();
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.forceShutdown(), graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
