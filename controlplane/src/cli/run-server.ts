import { constants } from "node:crypto";
import { reloadableChannelCredentials, reloadableServerCredentials, secretLogRedaction } from "@persys/schema";
import pino, { type Logger } from "pino";
import { startGrpcServer } from "../api/grpc/index.js";
import { ApiMetrics } from "../api/metrics.js";
import { startRestServer } from "../api/rest/rest-server.js";
import type { ServerConfig } from "../config/server-config.js";
import { EnvelopeCipher } from "../secrets/envelope-cipher.js";
import { VaultKvSealer } from "../secrets/vault-kv-sealer.js";
import { VaultTransitKeyProvider } from "../secrets/vault-transit-key-provider.js";
import { ControlPlane, PERSYS_VERSION } from "../server/control-plane.js";
import { type ServerTls, setupServerTls } from "../server/server-tls.js";
import { connectVault } from "../vault/vault-from-config.js";

export interface RunningServer {
  readonly controlPlane: ControlPlane;
  readonly grpcAddress: string;
  readonly httpUrl: string;
  /** TLS of this server (absent with `insecure`): its certificates and, in cluster-CA mode, the CA. */
  readonly tls?: ServerTls;
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
  const logger = options.logger ?? pino({ level: config.log.level, redact: secretLogRedaction });
  if (config.insecure)
    logger.warn(
      "serving without TLS and letting calls without credentials act as admin (--insecure): development only",
    );
  const vault = await connectVault(config, logger);
  const tls = config.insecure ? undefined : await setupServerTls(config, logger, vault);
  const metrics = new ApiMetrics();
  const controlPlane = await ControlPlane.start({
    config,
    logger,
    metrics: metrics.registry,
    ...((options.id ?? config.id) ? { id: options.id ?? config.id } : {}),
    // The control plane dials agents with its own certificate and checks theirs against the cluster CA.
    ...(tls ? { agentCredentials: reloadableChannelCredentials(tls.certificates) } : {}),
    ...(tls?.ca ? { ca: tls.ca } : {}),
    ...(vault && config.secrets.backend === "vault-transit"
      ? { secretSealer: new EnvelopeCipher(new VaultTransitKeyProvider(vault, config.vault.transitKey)) }
      : {}),
    ...(vault && config.secrets.backend === "vault-kv" ? { secretSealer: new VaultKvSealer(vault) } : {}),
  });
  const grpc = await startGrpcServer({
    address: config.listen.grpc,
    api: controlPlane.api,
    agentControl: controlPlane.agentControl,
    health: controlPlane.health,
    logger,
    metrics,
    ...(tls ? { credentials: reloadableServerCredentials(tls.certificates) } : {}),
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
    ...(tls
      ? {
          https: {
            ...httpsContext(tls),
            // Client certificates are asked for and verified, not required: browsers and CI use tokens.
            requestCert: true,
            rejectUnauthorized: false,
            // No session tickets: every connection does a full handshake, so a client certificate is
            // always verified and shown (a resumed session carries none to read).
            secureOptions: constants.SSL_OP_NO_TICKET,
          },
        }
      : {}),
  });
  const offRotate = tls?.certificates.onUpdate(() => {
    (rest.app.server as unknown as import("node:tls").Server).setSecureContext(httpsContext(tls));
  });
  const grpcHost = split(config.listen.grpc).host;
  let closing: Promise<void> | undefined;
  return {
    controlPlane,
    grpcAddress: `${grpcHost.includes(":") ? `[${grpcHost}]` : grpcHost}:${grpc.port}`,
    httpUrl: rest.url,
    ...(tls ? { tls } : {}),
    close: () => {
      closing ??= (async () => {
        offRotate?.();
        tls?.close();
        vault?.close();
        await Promise.allSettled([rest.close(), grpc.close(2_000)]);
        await controlPlane.close();
      })();
      return closing;
    },
  };
}

function httpsContext(tls: ServerTls): { key: string; cert: string; ca: string } {
  const m = tls.certificates.current;
  return { key: m.keyPem, cert: m.certPem, ca: m.caPem };
}
