import { Server, ServerCredentials, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { AgentCommandStreams, agent, api, command } from "@persys/schema";
import { controlPlaneOnly } from "./control-plane-only.js";

/** A started gRPC server and the port it is bound to. */
export interface AgentGrpcServer {
  readonly port: number;
  /** Stops accepting calls and ends the command streams; calls in flight get `graceMs` to finish before they are cancelled. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves `persys.agent.v1.AgentService`, the same calls over one stream (`persys.command.v1`, the
 * Persys control plane's pushes) and `persys.api.v1.NodeLogService` on one gRPC server at
 * `address` (`host:port`; port 0 picks a free one). With TLS `credentials`, only the control plane
 * (a verified certificate with O=`control-plane`) may call. Rejects when the address cannot be bound.
 */
export async function startAgentGrpcServer(options: {
  readonly address: string;
  readonly agentService: agent.AgentServiceServer;
  readonly nodeLogService: api.NodeLogServiceServer;
  /** Default: plaintext without caller checks (development). */
  readonly credentials?: ServerCredentials;
}): Promise<AgentGrpcServer> {
  const server = new Server({ "grpc.keepalive_permit_without_calls": 1 });
  const secure = options.credentials?._isSecure() ?? false;
  const guard = <T>(definition: Parameters<typeof controlPlaneOnly>[0], impl: T) =>
    secure
      ? controlPlaneOnly(definition, impl as UntypedServiceImplementation)
      : (impl as UntypedServiceImplementation);
  server.addService(agent.AgentServiceService, guard(agent.AgentServiceService, options.agentService));
  const commands = new AgentCommandStreams(options.agentService);
  server.addService(command.AgentCommandServiceService, guard(command.AgentCommandServiceService, commands.handlers()));
  server.addService(api.NodeLogServiceService, guard(api.NodeLogServiceService, options.nodeLogService));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(options.address, options.credentials ?? ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    port,
    close: (graceMs = 2_000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        commands.endAll(); // the control plane's push stream would hold tryShutdown for the whole grace
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
