import { Channel, type ChannelOptions, Metadata } from "@grpc/grpc-js";
import { api } from "@persys/schema";
import { AutomationApi } from "../automation/automation-api.js";
import { ClusterApi } from "../cluster/cluster-api.js";
import { type DiscoveryOptions, discoverClientOptions } from "../config/client-discovery.js";
import { EventsApi } from "../events/events-api.js";
import { IntelligenceApi } from "../intelligence/intelligence-api.js";
import { NodesApi } from "../nodes/nodes-api.js";
import { SecretsApi } from "../secrets/secrets-api.js";
import { SecurityApi } from "../security/security-api.js";
import { WorkloadsApi } from "../workloads/workloads-api.js";
import { CallRunner } from "./call-runner.js";
import { channelCredentials, DEFAULT_ENDPOINT, type PersysClientOptions, parseEndpoint } from "./client-options.js";
import { retryPolicy } from "./retry-policy.js";

/** The SDK's version, sent in the user agent. */
export const SDK_VERSION = "0.1.0";

/** The default per-call time budget. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A client of one Persys control plane over its public gRPC API (`persys.api.v1`).
 *
 * ```ts
 * const client = new PersysClient({ endpoint: "127.0.0.1:7070" });
 * await client.workloads.apply(container({ id: "web", image: "nginx:1.27", ports: [{ container: 80, host: 8080 }] }));
 * const running = await client.workloads.waitFor("web", "running", { timeoutMs: 60_000 });
 * client.close();
 * ```
 *
 * One client holds one gRPC channel (connected lazily, reconnected by itself); share it. Every
 * method rejects with a `PersysError` (`code`, `details`, `retryable`); retryable errors are
 * retried with backoff within the call's time budget; every method takes an `AbortSignal`.
 */
export class PersysClient {
  /** Workloads: apply, get, list, watch, waitFor, explain, plan, logs, start/stop/restart/retry, delete. */
  readonly workloads: WorkloadsApi;
  /** Nodes: list, get, cordon, uncordon, drain. */
  readonly nodes: NodesApi;
  /** The cluster summary. */
  readonly cluster: ClusterApi;
  /** Operational events: list and resumable watch. */
  readonly events: EventsApi;
  /** Explanations, forecasts, recommendations and questions (reads only). */
  readonly intelligence: IntelligenceApi;
  /** Automation policies, their audit trail and manual approvals. */
  readonly automation: AutomationApi;
  /** Secrets: put (idempotent), get and list (metadata only, never values), delete. */
  readonly secrets: SecretsApi;
  /** Who am I, API tokens, join tokens and user certificates. */
  readonly security: SecurityApi;
  /** The `host:port` this client connects to. */
  readonly address: string;

  private readonly channel: Channel;

  /**
   * Creates a client; does not connect yet (the first call does).
   *
   * @throws PersysError INVALID_CONFIG for a malformed endpoint or unusable TLS settings.
   */
  constructor(options: PersysClientOptions = {}) {
    const endpoint = parseEndpoint(options.endpoint ?? DEFAULT_ENDPOINT);
    this.address = endpoint.address;
    const creds = channelCredentials(options.tls, endpoint.tls);
    const serverName = typeof options.tls === "object" ? options.tls.serverName : undefined;
    const channelOptions: ChannelOptions = {
      "grpc.primary_user_agent": `persys-sdk/${SDK_VERSION}`,
      "grpc.initial_reconnect_backoff_ms": 250,
      "grpc.max_reconnect_backoff_ms": 5_000,
      ...(serverName ? { "grpc.ssl_target_name_override": serverName, "grpc.default_authority": serverName } : {}),
      ...options.channelOptions,
    };
    this.channel = new Channel(endpoint.address, creds, channelOptions);
    const clientOptions = { channelOverride: this.channel };
    const token = options.token;
    const runner = new CallRunner({
      metadata: () => {
        const metadata = new Metadata();
        if (token) metadata.set("authorization", `Bearer ${token}`);
        return metadata;
      },
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retry: retryPolicy(options.retry),
    });
    const workloadClient = new api.WorkloadServiceClient(endpoint.address, creds, clientOptions);
    const nodeClient = new api.NodeServiceClient(endpoint.address, creds, clientOptions);
    const clusterClient = new api.ClusterServiceClient(endpoint.address, creds, clientOptions);
    const eventClient = new api.EventServiceClient(endpoint.address, creds, clientOptions);
    this.cluster = new ClusterApi(runner, clusterClient);
    this.events = new EventsApi(runner, eventClient, async (signal) => {
      try {
        return (await this.cluster.summary({ signal, timeoutMs: 5_000 })).generatedAt ?? new Date();
      } catch {
        return new Date();
      }
    });
    this.nodes = new NodesApi(runner, nodeClient);
    this.automation = new AutomationApi(
      runner,
      new api.AutomationServiceClient(endpoint.address, creds, clientOptions),
    );
    this.secrets = new SecretsApi(runner, new api.SecretServiceClient(endpoint.address, creds, clientOptions));
    this.intelligence = new IntelligenceApi(
      runner,
      new api.IntelligenceServiceClient(endpoint.address, creds, clientOptions),
    );
    this.security = new SecurityApi(runner, new api.SecurityServiceClient(endpoint.address, creds, clientOptions));
    this.workloads = new WorkloadsApi(runner, workloadClient, this.events);
  }

  /**
   * A client configured from the environment and `~/.persys/config.yaml` (see
   * {@link discoverClientOptions} for the order); `overrides` win over what is found.
   *
   * @throws PersysError INVALID_CONFIG for a malformed config file or an unknown context.
   */
  static fromEnvironment(options: DiscoveryOptions = {}): PersysClient {
    return new PersysClient(discoverClientOptions(options).options);
  }

  /** Closes the channel; calls in flight fail with CANCELLED or UNAVAILABLE. Idempotent. */
  close(): void {
    this.channel.close();
  }
}
