import pino, { type Logger } from "pino";
import { startGrpcServer } from "../api/grpc/index.js";
import { ApiMetrics } from "../api/metrics.js";
import { startRestServer } from "../api/rest/rest-server.js";
import type { ServerConfig } from "../config/server-config.js";
import { ControlPlane, PERSYS_VERSION } from "../server/control-plane.js";

export interface RunningServer {
  readonly controlPlane: ControlPlane;
  readonly grpcAddress: string;
  readonly httpUrl: string;
  close(): Promise<void>;
}

function split(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) };
}

/**
 * Starts a control-plane server process: the core, gRPC (public API + AgentControl + health +
 * reflection) and REST (`/v1`, compat routes, OpenAPI, probes, metrics) on the configured addresses.
 */
export async function runServer(
  config: ServerConfig,
  options: { logger?: Logger; id?: string } = {},
): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: config.log.level });
  if (config.insecure) logger.warn("serving without TLS (--insecure): development only");
  const metrics = new ApiMetrics();
  const controlPlane = await ControlPlane.start({
    config,
    logger,
    metrics: metrics.registry,
    ...((options.id ?? config.id) ? { id: options.id ?? config.id } : {}),
  });
  const grpc = await startGrpcServer({
    address: config.listen.grpc,
    api: controlPlane.api,
    agentControl: controlPlane.agentControl,
    health: controlPlane.health,
    logger,
    metrics,
  });
  const http = split(config.listen.http);
  const rest = await startRestServer({
    api: controlPlane.api,
    agentControl: controlPlane.agentControl,
    health: controlPlane.health,
    metrics,
    logger,
    host: http.host,
    port: http.port,
    version: PERSYS_VERSION,
  });
  const grpcHost = split(config.listen.grpc).host;
  let closing: Promise<void> | undefined;
  return {
    controlPlane,
    grpcAddress: `${grpcHost.includes(":") ? `[${grpcHost}]` : grpcHost}:${grpc.port}`,
    httpUrl: rest.url,
    close: () => {
      closing ??= (async () => {
        await Promise.allSettled([rest.close(), grpc.close(2_000)]);
        await controlPlane.close();
      })();
      return closing;
    },
  };
}
