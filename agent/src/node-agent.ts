import { existsSync } from "node:fs";
import { networkInterfaces } from "node:os";
import {
  agent,
  invalid,
  reloadableChannelCredentials,
  reloadableServerCredentials,
  secretLogRedaction,
} from "@persys/schema";
import pino, { type Logger } from "pino";
import { type AgentConfig, labelMap } from "./config/agent-config.js";
import { loadAgentTls } from "./control/agent-tls.js";
import { ControlSession } from "./control/control-session.js";
import { joinCluster, renewNodeCertificate } from "./control/join-cluster.js";
import { AGENT_VERSION, heartbeatRequest, type NodeIdentity, registerNodeRequest } from "./control/node-report.js";
import { OrphanCollector } from "./gc/orphan-collector.js";
import { type HostUsage, HostUsageSampler, measureCapacity, reportedResources } from "./host/host-resources.js";
import { RuntimeMonitor } from "./host/runtime-monitor.js";
import { AgentMetrics } from "./metrics/agent-metrics.js";
import { ActionLog } from "./replicas/action-log.js";
import { ReplicaConverger } from "./replicas/replica-converger.js";
import type { ReplicaDriverFactory } from "./replicas/replica-driver.js";
import { ReplicaManager } from "./replicas/replica-manager.js";
import { ComposeDriver } from "./runtimes/compose/compose-driver.js";
import { DockerEventStream } from "./runtimes/docker/docker-events.js";
import { DockerRuntime } from "./runtimes/docker/docker-runtime.js";
import { UsageSampler } from "./runtimes/docker/usage-sampler.js";
import { VmRuntime } from "./runtimes/vm/vm-runtime.js";
import { type AgentGrpcServer, startAgentGrpcServer } from "./server/agent-grpc-server.js";
import { agentServiceImplementation } from "./server/agent-service.js";
import { type MetricsServer, startMetricsServer } from "./server/metrics-server.js";
import { nodeLogServiceImplementation } from "./server/node-log-service.js";
import { ReplicaStore } from "./state/replica-store.js";

export interface NodeAgentOptions {
  readonly logger?: Logger;
}

function split(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) };
}

/** The first non-loopback IPv4 address of the host, else 127.0.0.1. */
function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) if (i.family === "IPv4" && !i.internal) return i.address;
  }
  return "127.0.0.1";
}

/**
 * A running Persys node agent: durable replica state, the Docker runtime with its events stream,
 * usage sampling, orphan collection, the AgentService/NodeLogService gRPC server, /metrics, and
 * the register/heartbeat session with the control plane. `close()` stops the agent and leaves the
 * containers running (a restarted agent adopts them).
 */
export class NodeAgent {
  private constructor(
    readonly config: AgentConfig,
    readonly endpoint: string,
    readonly metricsUrl: string,
    readonly replicas: ReplicaManager,
    readonly runtime: DockerRuntime,
    readonly actions: ActionLog,
    readonly monitor: RuntimeMonitor,
    readonly session: ControlSession,
    private readonly stops: (() => Promise<void> | void)[],
  ) {}

  get nodeId(): string {
    return this.config.node.id;
  }

  /**
   * Starts everything in dependency order. Rejects (leaving nothing running) when the state dir
   * cannot be opened or an address cannot be bound; a missing Docker or control plane is not an
   * error: the agent reports RuntimeReady=False, or keeps retrying registration.
   */
  static async start(config: AgentConfig, options: NodeAgentOptions = {}): Promise<NodeAgent> {
    const logger = (options.logger ?? pino({ level: config.log.level, redact: secretLogRedaction })).child({
      node: config.node.id,
    });
    const nodeId = config.node.id;
    const stops: (() => Promise<void> | void)[] = [];
    const cleanup = async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    };
    try {
      const store = ReplicaStore.open(config.stateDir);
      stops.push(() => store.close());
      const docker = config.runtimes.docker;
      const runtime = new DockerRuntime({ socket: docker.socket, pullTimeoutMs: docker.pullTimeoutSeconds * 1000 });
      const actions = new ActionLog();
      // Late-bound: the session and manager reference each other through callbacks.
      let session: ControlSession | undefined;
      let replicas: ReplicaManager | undefined;
      const monitor = new RuntimeMonitor({
        runtime: docker.enabled ? runtime : undefined,
        stateDir: config.stateDir,
        minFreeDiskMib: config.resources.minFreeDiskMib,
        onChange: (c) => {
          (c.ready ? logger.info : logger.warn).call(
            logger,
            { reason: c.reason, message: c.message },
            "RuntimeReady changed",
          );
          session?.reregister();
          if (c.ready) {
            replicas?.resync("container");
            replicas?.resync("compose");
          }
        },
      });
      await monitor.start();
      stops.push(() => monitor.stop());

      const metrics = new AgentMetrics({
        nodeId,
        replicas: () => replicas?.samples() ?? [],
        runtimeReady: () => monitor.current.ready,
      });
      const grpcListen = split(config.listen.grpc);
      const advertisedHost =
        grpcListen.host === "0.0.0.0" || grpcListen.host === "::" ? hostAddress() : grpcListen.host;
      let containers: ReplicaConverger | undefined;
      let stacks: ComposeDriver | undefined;
      const drivers: ReplicaDriverFactory[] = [];
      if (docker.enabled) {
        drivers.push((ctx) => {
          containers = new ReplicaConverger(ctx, {
            runtime,
            notReady: () => monitor.notReady(),
            onRuntimeError: () => monitor.probeSoon(),
            logs: { maxSizeMib: docker.logMaxSizeMib, maxFiles: docker.logMaxFiles },
          });
          return containers;
        });
        drivers.push((ctx) => {
          stacks = new ComposeDriver(ctx, {
            runtime,
            stateDir: config.stateDir,
            notReady: () => monitor.notReady(),
            onRuntimeError: () => monitor.probeSoon(),
            logs: { maxSizeMib: docker.logMaxSizeMib, maxFiles: docker.logMaxFiles },
          });
          return stacks;
        });
      }
      const vmRuntime = new VmRuntime(config, logger, () => session?.reregister());
      if (vmRuntime.enabled) drivers.push(vmRuntime.factory);
      const manager = new ReplicaManager({
        nodeId,
        store,
        actions,
        logger,
        metrics,
        nodeAddress: config.advertiseEndpoint ? split(config.advertiseEndpoint).host : advertisedHost,
        drivers,
        onChange: () => session?.report(),
      });
      replicas = manager;
      stops.push(() => manager.close());
      await vmRuntime.start();

      const events = new DockerEventStream(runtime, {
        labels: [`persys.node=${nodeId}`],
        onEvent: (event) => {
          metrics.dockerEvents.inc();
          containers?.onEvent(event);
          stacks?.onEvent(event);
        },
        onConnected: () => {
          manager.resync("container");
          manager.resync("compose");
        },
        onDisconnected: (error) => {
          logger.debug({ err: String(error) }, "Docker events stream broke; reconnecting");
          monitor.probeSoon();
        },
      });
      manager.start();
      if (docker.enabled) {
        events.start();
        stops.push(() => events.stop());
      }

      let lastUsage: HostUsage | undefined;
      const hostUsage = new HostUsageSampler(config.stateDir);
      const usageNow = () => {
        lastUsage ??= hostUsage.sample();
        return lastUsage;
      };
      const tlsHosts = [
        ...new Set([
          config.advertiseEndpoint ? split(config.advertiseEndpoint).host : advertisedHost,
          "127.0.0.1",
          "localhost",
        ]),
      ];
      const controlPlane = config.controlPlane.endpoints[0]!;
      const tls = await loadAgentTls(config, logger, {
        join: async (paths) => {
          const trust = config.tls.caCertHash
            ? { caCertHash: config.tls.caCertHash }
            : existsSync(paths.caFile)
              ? { caFile: paths.caFile }
              : undefined;
          if (!trust) {
            throw invalid("INVALID_CONFIG", [
              {
                path: "tls.caCertHash",
                reason: `joining needs the cluster CA: --tls-ca-cert-hash sha256:... or ${paths.caFile}`,
              },
            ]);
          }
          const joined = await joinCluster({
            controlPlane,
            joinToken: config.tls.joinToken,
            nodeId,
            trust,
            dir: paths.dir,
            files: { certPath: paths.certFile, keyPath: paths.keyFile, caPath: paths.caFile },
            hosts: tlsHosts,
          });
          logger.info({ notAfter: joined.notAfter.toISOString(), joined: joined.joined }, "joined the cluster");
        },
        renew: (paths) =>
          renewNodeCertificate({
            controlPlane,
            nodeId,
            files: { certPath: paths.certFile, keyPath: paths.keyFile, caPath: paths.caFile },
            hosts: tlsHosts,
          }),
      });
      if (tls) stops.push(() => tls.close());
      const grpc: AgentGrpcServer = await startAgentGrpcServer({
        address: config.listen.grpc,
        ...(tls ? { credentials: reloadableServerCredentials(tls.certificates) } : {}),
        agentService: agentServiceImplementation({
          nodeId,
          version: AGENT_VERSION,
          replicas: manager,
          actions,
          runtimeStatus: () => ({
            docker: monitor.current.ready
              ? "healthy"
              : `unhealthy: ${monitor.current.reason}: ${monitor.current.message}`,
          }),
          hostUsage: usageNow,
        }),
        nodeLogService: nodeLogServiceImplementation({
          nodeId,
          runtime,
          lookup: (name) => {
            const containerId = manager.containerOf(name);
            const status = manager.status(name);
            if (!status?.persys) return undefined;
            const index = status.persys.replicaIndex;
            if (status.type === agent.WorkloadType.WORKLOAD_TYPE_VM && vmRuntime.driver) {
              return { consoleLog: vmRuntime.driver.consoleOf(status.id), index };
            }
            return containerId ? { containerId, index } : undefined;
          },
        }),
      });
      stops.push(() => grpc.close());
      const endpoint = config.advertiseEndpoint ?? `${advertisedHost}:${grpc.port}`;
      const metricsServer: MetricsServer = await startMetricsServer({
        address: config.listen.metrics,
        registry: metrics.registry,
        health: () => ({
          node: nodeId,
          registered: session?.isRegistered ?? false,
          runtimeReady: monitor.current.ready,
          runtime: `${monitor.current.reason}: ${monitor.current.message}`,
          replicas: manager.size,
        }),
      });
      stops.push(() => metricsServer.close());

      const sampler = new UsageSampler(
        runtime,
        () =>
          manager.running().map(({ entry, containerId }) => ({
            containerId,
            record: (u) => {
              entry.observed.cpuMillicores = u.cpuMillicores;
              entry.observed.memoryBytes = u.memoryBytes;
              entry.observed.usageAt = u.at;
            },
          })),
        { intervalMs: config.usage.statsIntervalSeconds * 1000 },
      );
      const gc = new OrphanCollector({
        runtime,
        nodeId,
        owns: (c) => manager.owns(c),
        graceMs: config.gc.orphanGraceSeconds * 1000,
        intervalMs: config.gc.intervalSeconds * 1000,
        actions,
        logger,
        metrics,
      });
      if (docker.enabled) {
        sampler.start();
        gc.start();
        stops.push(
          () => sampler.stop(),
          () => gc.stop(),
        );
      }

      const measured = measureCapacity(config.stateDir);
      const resources = reportedResources(measured, config.resources);
      const identity: NodeIdentity = {
        nodeId,
        labels: labelMap(config.node.labels),
        clusterId: config.node.clusterId,
        endpoint,
        capacity: resources.capacity,
        allocatable: resources.allocatable,
      };
      const capabilities = docker.enabled ? ["docker", "compose"] : [];
      session = new ControlSession({
        endpoints: config.controlPlane.endpoints,
        ...(tls ? { credentials: reloadableChannelCredentials(tls.certificates) } : {}),
        callTimeoutMs: config.controlPlane.callTimeoutMs,
        reportDebounceMs: config.heartbeat.reportDebounceMs,
        intervalMs: config.heartbeat.intervalSeconds ? config.heartbeat.intervalSeconds * 1000 : undefined,
        registerRequest: () =>
          registerNodeRequest(identity, {
            capabilities: [...capabilities, ...vmRuntime.capabilities()],
            kinds: manager.kinds,
            conditions: [monitor.condition()],
            now: new Date(),
          }),
        heartbeatRequest: () => {
          lastUsage = hostUsage.sample();
          const replicaState = manager.heartbeat();
          return heartbeatRequest(nodeId, {
            allocated: manager.allocated(),
            used: lastUsage,
            conditions: [monitor.condition()],
            statuses: replicaState.statuses,
            usage: replicaState.usage,
            reports: replicaState.reports,
            now: new Date(),
          });
        },
        onRegistered: (res, at) =>
          logger.info({ controlPlane: at, heartbeatSeconds: res.heartbeatIntervalSeconds, endpoint }, "registered"),
        onHeartbeat: (result) => metrics.heartbeats.inc({ result }),
        onError: (rpc, error, at) => {
          if (rpc === "RegisterNode") metrics.registrations.inc({ result: "error" });
          logger.warn({ rpc, controlPlane: at, err: error.message }, "control plane call failed");
        },
      });
      session.start();
      stops.push(() => session?.stop());
      logger.info(
        { endpoint, metrics: metricsServer.url, stateDir: config.stateDir, runtime: monitor.current.reason },
        "persys agent started",
      );
      return new NodeAgent(config, endpoint, metricsServer.url, manager, runtime, actions, monitor, session, stops);
    } catch (error) {
      await cleanup();
      throw error;
    }
  }

  /** Stops the agent (containers keep running). Idempotent. */
  async close(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse()) await stop();
  }
}
