import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { ChannelCredentials } from "@grpc/grpc-js";
import { type api, type control, secretLogRedaction } from "@persys/schema";
import pino, { type Logger } from "pino";
import type { Registry } from "prom-client";
import type { AgentControlApi, PersysApi, ServerHealth } from "../api/persys-api.js";
import { AGENT_CONTROL_RULES, PERSYS_API_RULES } from "../auth/api-permissions.js";
import { ApiTokenStore } from "../auth/api-tokens.js";
import { Authenticator } from "../auth/authenticator.js";
import { authorizeApi } from "../auth/authorizing-api.js";
import { RequestAudit } from "../auth/request-audit.js";
import { specPolicyFromConfig } from "../auth/spec-policy-config.js";
import { AuditTrail } from "../automation/audit-trail.js";
import { AutomationEngine, type AutomationEngineOptions } from "../automation/automation-engine.js";
import { AutomationService } from "../automation/automation-service.js";
import { PolicyStore } from "../automation/policy-store.js";
import { ClusterState } from "../cluster/cluster-state.js";
import { EventRecorder } from "../cluster/event-recorder.js";
import { ClusterKeys } from "../cluster/keys.js";
import { AgentControlService } from "../compat/agent-control-service.js";
import { workloadFromControl } from "../compat/control-workload-mapping.js";
import type { ServerConfig } from "../config/server-config.js";
import type { EventStore } from "../events/event-store.js";
import { openEventStore } from "../events/open-event-store.js";
import { IntelligenceService } from "../intelligence/intelligence-service.js";
import { ReservationSampler } from "../intelligence/reservation-sampler.js";
import { LeaderElection, type LeaderTerm } from "../leader/leader-election.js";
import { NodeRegistry } from "../nodes/node-registry.js";
import { NodeService } from "../nodes/node-service.js";
import { UsageRecorder } from "../nodes/usage-recorder.js";
import type { CertificateIssuer } from "../pki/certificate-issuer.js";
import { ClusterCa } from "../pki/cluster-ca.js";
import { JoinTokenStore } from "../pki/join-tokens.js";
import { AgentPool } from "../reconciler/agent-pool.js";
import { Reconciler } from "../reconciler/reconciler.js";
import { SchedulingView } from "../scheduling/scheduling-view.js";
import { SecretResolver } from "../secrets/secret-resolver.js";
import { defaultSecretSealer } from "../secrets/secret-sealer.js";
import { SecretService } from "../secrets/secret-service.js";
import { type SecretSealer, SecretStore } from "../secrets/secret-store.js";
import { SecurityService } from "../security/security-service.js";
import { ControlPlaneApi } from "../services/control-plane-api.js";
import { EventService } from "../services/event-service.js";
import { replicaLogs } from "../services/replica-logs.js";
import { WorkloadWatch } from "../services/workload-watch.js";
import { openStateStore } from "../state/open-state-store.js";
import type { StateStore } from "../state/state-store.js";
import { WorkloadService } from "../workloads/workload-service.js";
import { registerCoreMetrics } from "./core-metrics.js";

export const PERSYS_VERSION = "0.1.0";

export interface ControlPlaneOptions {
  readonly config: ServerConfig;
  readonly logger?: Logger;
  /** This server's identity in leader election (default: hostname and pid). */
  readonly id?: string;
  readonly resyncMs?: number;
  /** Prometheus registry the control plane registers its gauges in. */
  readonly metrics?: Registry;
  /** Seals secret data at rest. Default: the envelope cipher with the local KEK in the data dir. */
  readonly secretSealer?: SecretSealer;
  /** Credentials for dialling agents (TLS with the control plane's certificate). Default: plaintext. */
  readonly agentCredentials?: ChannelCredentials;
  /** Issues node and user certificates (joining, `persysctl user cert`). Default: the cluster CA in `<dataDir>/pki`. */
  readonly ca?: CertificateIssuer;
}

/**
 * One control-plane server: stores, the cluster state cache, the API services, node registry and,
 * while it leads, the reconciler. Every server serves reads and writes; only the leader schedules.
 * Transports (gRPC, REST) are attached by the caller to `api`, `agentControl` and `health`.
 */
export class ControlPlane {
  /** The public API behind authentication and authorisation (what the transports serve). */
  readonly api: PersysApi;
  /** AgentControl behind authentication and authorisation. */
  readonly agentControl: AgentControlApi;
  /** Bearer tokens of this cluster (`persys up` creates the first admin token). */
  readonly tokens: ApiTokenStore;
  /** The API without the authorisation layer: for the server's own callers (automation acts as itself). */
  private readonly coreApi: PersysApi;
  readonly health: ServerHealth;
  private reconciler: Reconciler | undefined;
  private term: LeaderTerm | undefined;

  private constructor(
    readonly id: string,
    readonly store: StateStore,
    readonly eventStore: EventStore,
    readonly state: ClusterState,
    readonly view: SchedulingView,
    readonly workloads: WorkloadService,
    readonly nodes: NodeService,
    private readonly election: LeaderElection,
    private readonly pool: AgentPool,
    readonly logger: Logger,
    apiImpl: PersysApi,
    agentControl: AgentControlService,
    config: ServerConfig,
    tokens: ApiTokenStore,
  ) {
    this.tokens = tokens;
    const security = {
      authenticator: new Authenticator({ tokens: this.tokens, allowAnonymous: config.insecure }),
      audit: new RequestAudit(new EventRecorder(eventStore)),
      specPolicy: specPolicyFromConfig(config.security),
    };
    this.coreApi = apiImpl;
    this.api = authorizeApi(apiImpl, PERSYS_API_RULES, {
      ...security,
      service: "persys.api.v1",
      workloadsOf: (method, request) =>
        method === "applyWorkload"
          ? [{ workload: (request as api.ApplyWorkloadRequest).workload, path: "" }]
          : method === "applyWorkloads"
            ? (request as api.ApplyWorkloadsRequest).workloads.map((workload, i) => ({
                workload,
                path: `workloads[${i}]`,
              }))
            : [],
    });
    this.agentControl = authorizeApi<AgentControlApi>(agentControl, AGENT_CONTROL_RULES, {
      ...security,
      service: "persys.control.v1.AgentControl",
      workloadsOf: (method, request) =>
        method === "applyWorkload"
          ? [{ workload: workloadFromControl(request as control.ApplyWorkloadRequest), path: "" }]
          : [],
    });
    this.health = {
      live: () => true,
      ready: () => {
        const events = this.eventStore.health();
        return {
          ready: true,
          details: {
            state: `${this.store.kind} (revision ${this.state.revision})`,
            events:
              events.state === "ok"
                ? `${this.eventStore.kind} ok`
                : `${this.eventStore.kind} degraded: ${events.reason}`,
            leader: this.term ? "this server" : "another server",
          },
        };
      },
    };
  }

  /** Opens the stores, loads the cluster state and starts campaigning for leadership. */
  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const { config } = options;
    const logger = options.logger ?? pino({ level: config.log.level, redact: secretLogRedaction });
    const id = options.id ?? `${hostname()}-${process.pid}`;
    if (config.state.kind === "embedded" || config.events.kind === "embedded")
      mkdirSync(config.dataDir, { recursive: true });
    const store = await openStateStore(
      config.state.kind === "etcd"
        ? { kind: "etcd", endpoints: config.state.endpoints }
        : { kind: "embedded", dataDir: join(config.dataDir, "state") },
    );
    const eventStore = await openEventStore(
      config.events.kind === "redis"
        ? { kind: "redis", url: config.events.url!, prefix: config.events.prefix }
        : { kind: "embedded", dataDir: join(config.dataDir, "events") },
    );
    const offHealth = eventStore.onHealthChange((h) =>
      h.state === "ok"
        ? logger.info("event store recovered")
        : logger.warn({ reason: h.reason }, "event store degraded; scheduling continues"),
    );
    const keys = new ClusterKeys(config.state.prefix);
    const state = new ClusterState(store, keys);
    await state.start((error) => logger.error({ err: error.toBody() }, "state watch ended"));
    const recorder = new EventRecorder(eventStore, (error) => logger.debug({ err: String(error) }, "event dropped"));
    const usage = new UsageRecorder(
      eventStore,
      config.intelligence.sampleIntervalMs,
      config.intelligence.maxSamplesPerSecond,
    );
    const view = new SchedulingView(state, usage, { strategy: config.scheduler.strategy });
    view.start();
    const registry = new NodeRegistry({
      store,
      state,
      keys,
      events: recorder,
      usage,
      leaseTtlSeconds: config.nodes.leaseTtlSeconds,
    });
    const workloads = new WorkloadService({ store, state, keys, view, events: recorder });
    const nodes = new NodeService({ state, registry, usage, view });
    const pool = new AgentPool(options.agentCredentials ? { credentials: options.agentCredentials } : {});
    const sampler = new ReservationSampler(
      state,
      eventStore,
      config.intelligence.sampleIntervalMs,
      Date.now,
      config.intelligence.maxSamplesPerSecond,
    );
    const sources = { state, nodes, workloads, events: eventStore, now: Date.now };
    const policies = new PolicyStore(store, keys.prefix);
    const secretStore = new SecretStore(store, keys, options.secretSealer ?? (await defaultSecretSealer(config)));
    const audit = new AuditTrail(eventStore);
    const intelligence = new IntelligenceService(
      sources,
      config.intelligence.modelUrl
        ? {
            url: config.intelligence.modelUrl,
            model: config.intelligence.modelName,
            ...(config.intelligence.modelApiKey ? { apiKey: config.intelligence.modelApiKey } : {}),
          }
        : undefined,
    );
    let self: ControlPlane | undefined;
    const election = new LeaderElection(store, {
      key: keys.leader,
      id,
      ttlSeconds: config.leader.ttlSeconds,
      onElected: (term) => self?.lead(term),
      onDeposed: (term, reason) => self?.stepDown(term, reason),
      onRetry: (error) => logger.warn({ err: String(error) }, "leader campaign failed; retrying"),
    });
    const tokens = new ApiTokenStore(store, keys.prefix);
    const ca = options.ca ?? (await ClusterCa.loadOrCreate(join(config.dataDir, "pki")));
    const apiImpl: ControlPlaneApi = new ControlPlaneApi({
      state,
      workloads,
      nodes,
      events: new EventService(eventStore),
      watch: new WorkloadWatch(state),
      intelligence,
      automation: new AutomationService(policies, audit, (): PersysApi => apiImpl, id),
      secrets: new SecretService(state, secretStore),
      security: new SecurityService({ tokens, joinTokens: new JoinTokenStore(store, { prefix: keys.prefix }), ca }),
      logs: replicaLogs({ state, pool }),
      leaderId: () => state.leaderId,
      version: PERSYS_VERSION,
    });
    self = new ControlPlane(
      id,
      store,
      eventStore,
      state,
      view,
      workloads,
      nodes,
      election,
      pool,
      logger,
      apiImpl,
      new AgentControlService(registry, workloads, nodes),
      config,
      tokens,
    );
    self.offHealth = offHealth;
    self.sampler = sampler;
    self.secretResolver = new SecretResolver(state, secretStore);
    self.automationParts = { policies, audit, sources };
    const cp = self;
    if (options.metrics) {
      registerCoreMetrics(options.metrics, {
        state,
        events: eventStore,
        isLeader: () => cp.isLeader,
        queueDepth: () => cp.reconciler?.queueDepth ?? 0,
      });
    }
    self.timing = { lostAfterMs: config.nodes.lostAfterSeconds * 1000, resyncMs: options.resyncMs, config };
    election.start();
    return self;
  }

  private offHealth: () => void = () => {};
  /** Opens secret values for the leader's pushes (to the node of the replica only). */
  private secretResolver: SecretResolver | undefined;
  /** Samples reservations per node into series while this server leads (forecasts read them). */
  private sampler: ReservationSampler | undefined;
  /** Policies are evaluated and acted on while this server leads. */
  private automationParts!: Pick<AutomationEngineOptions, "policies" | "audit" | "sources">;
  private automation: AutomationEngine | undefined;
  private timing!: { lostAfterMs: number; resyncMs: number | undefined; config: ServerConfig };

  get isLeader(): boolean {
    return this.term !== undefined;
  }

  /** Resolves when this server leads (tests). */
  async whenLeader(timeoutMs = 20_000): Promise<void> {
    const start = Date.now();
    while (!this.isLeader) {
      if (Date.now() - start > timeoutMs) throw new Error(`${this.id} did not become leader within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Resolves when the reconciler has nothing queued (tests and benchmarks). */
  async settled(): Promise<void> {
    await this.reconciler?.idle();
  }

  private lead(term: LeaderTerm): void {
    this.term = term;
    this.logger.info({ term: term.token }, "elected leader: scheduling and reconciling");
    this.reconciler = new Reconciler({
      store: this.store,
      state: this.state,
      keys: this.state.keys,
      view: this.view,
      events: new EventRecorder(this.eventStore),
      pool: this.pool,
      term,
      lostAfterMs: this.timing.lostAfterMs,
      resyncMs: this.timing.resyncMs ?? this.timing.config.reconciler.resyncSeconds * 1000,
      concurrency: this.timing.config.reconciler.concurrency,
      pushConcurrency: this.timing.config.reconciler.pushConcurrency,
      logger: this.logger,
      ...(this.secretResolver ? { secrets: this.secretResolver } : {}),
    });
    this.reconciler.start();
    this.sampler?.start();
    this.automation = new AutomationEngine({
      ...this.automationParts,
      core: this.coreApi,
      intervalMs: this.timing.config.automation.evaluateIntervalMs,
      serverId: this.id,
      logger: this.logger,
    });
    this.automation.start();
  }

  private stepDown(term: LeaderTerm, reason: string): void {
    if (this.term?.token !== term.token) return;
    this.logger.warn({ term: term.token, reason }, "no longer leader");
    this.term = undefined;
    const reconciler = this.reconciler;
    this.reconciler = undefined;
    this.sampler?.stop();
    void this.automation?.stop();
    this.automation = undefined;
    void reconciler?.stop();
  }

  /** Resigns leadership and releases everything. */
  async close(): Promise<void> {
    this.sampler?.stop();
    await this.automation?.stop();
    await this.election.stop();
    await this.reconciler?.stop();
    this.view.stop();
    await this.state.stop();
    this.pool.close();
    this.offHealth();
    await this.eventStore.close();
    await this.store.close();
  }
}
