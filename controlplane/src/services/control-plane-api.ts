import { type api, PersysError } from "@persys/schema";
import type { CallContext, PersysApi } from "../api/persys-api.js";
import type { AutomationService } from "../automation/automation-service.js";
import type { ClusterState } from "../cluster/cluster-state.js";
import type { IntelligenceService } from "../intelligence/intelligence-service.js";
import type { NodeService } from "../nodes/node-service.js";
import type { SecretService } from "../secrets/secret-service.js";
import type { SecurityService } from "../security/security-service.js";
import type { WorkloadService } from "../workloads/workload-service.js";
import { clusterSummary } from "./cluster-summary.js";
import type { EventService } from "./event-service.js";
import type { WorkloadWatch } from "./workload-watch.js";

export interface ControlPlaneApiParts {
  readonly state: ClusterState;
  readonly workloads: WorkloadService;
  readonly nodes: NodeService;
  readonly events: EventService;
  readonly watch: WorkloadWatch;
  readonly intelligence: IntelligenceService;
  readonly automation: AutomationService;
  readonly secrets: SecretService;
  /** Tokens, join tokens and certificates; without it those methods answer UNAVAILABLE. */
  readonly security?: SecurityService;
  readonly logs?: (
    request: api.StreamWorkloadLogsRequest,
    signal: AbortSignal,
  ) => AsyncIterable<api.StreamWorkloadLogsResponse>;
  readonly leaderId: () => string;
  readonly version: string;
}

/** `PersysApi` implemented by the control plane's services (the transports call this). */
export class ControlPlaneApi implements PersysApi {
  constructor(private readonly p: ControlPlaneApiParts) {}

  applyWorkload(request: api.ApplyWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.apply(request);
  }
  applyWorkloads(request: api.ApplyWorkloadsRequest, _ctx: CallContext) {
    return this.p.workloads.applyMany(request);
  }
  async getWorkload(request: api.GetWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.get(request);
  }
  async listWorkloads(request: api.ListWorkloadsRequest, _ctx: CallContext) {
    return this.p.workloads.list(request);
  }
  deleteWorkload(request: api.DeleteWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.delete(request);
  }
  startWorkload(request: api.StartWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.start(request);
  }
  stopWorkload(request: api.StopWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.stop(request);
  }
  restartWorkload(request: api.RestartWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.restart(request);
  }
  retryWorkload(request: api.RetryWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.retry(request);
  }
  moveReplica(request: api.MoveReplicaRequest, ctx: CallContext) {
    return this.p.workloads.move(request, ctx.identity);
  }
  async explainWorkload(request: api.ExplainWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.explain(request);
  }
  async planWorkload(request: api.PlanWorkloadRequest, _ctx: CallContext) {
    return this.p.workloads.plan(request);
  }
  streamWorkloadLogs(
    request: api.StreamWorkloadLogsRequest,
    ctx: CallContext,
  ): AsyncIterable<api.StreamWorkloadLogsResponse> {
    if (!this.p.logs) {
      throw new PersysError("UNAVAILABLE", "log streaming is not available on this control plane");
    }
    this.p.workloads.get({ workloadId: request.workloadId, view: 1 });
    return this.p.logs(request, ctx.signal);
  }
  watchWorkloads(request: api.WatchWorkloadsRequest, ctx: CallContext) {
    return this.p.watch.watch(request, ctx.signal);
  }
  async listNodes(request: api.ListNodesRequest, _ctx: CallContext) {
    return this.p.nodes.list(request);
  }
  async getNode(request: api.GetNodeRequest, _ctx: CallContext) {
    return this.p.nodes.get(request);
  }
  cordonNode(request: api.CordonNodeRequest, _ctx: CallContext) {
    return this.p.nodes.cordon(request);
  }
  uncordonNode(request: api.UncordonNodeRequest, _ctx: CallContext) {
    return this.p.nodes.uncordon(request);
  }
  drainNode(request: api.DrainNodeRequest, _ctx: CallContext) {
    return this.p.nodes.drain(request);
  }
  async getClusterSummary(_request: api.GetClusterSummaryRequest, _ctx: CallContext) {
    return { summary: clusterSummary(this.p.state, this.p.nodes, this.p.leaderId(), this.p.version) };
  }
  listEvents(request: api.ListEventsRequest, _ctx: CallContext) {
    return this.p.events.list(request);
  }
  watchEvents(request: api.WatchEventsRequest, ctx: CallContext) {
    return this.p.events.watch(request, ctx.signal);
  }
  diagnoseWorkload(request: api.DiagnoseWorkloadRequest, _ctx: CallContext) {
    return this.p.intelligence.diagnose(request);
  }
  getForecast(request: api.GetForecastRequest, _ctx: CallContext) {
    return this.p.intelligence.forecast(request);
  }
  listRecommendations(request: api.ListRecommendationsRequest, _ctx: CallContext) {
    return this.p.intelligence.recommendations(request);
  }
  ask(request: api.AskRequest, _ctx: CallContext) {
    return this.p.intelligence.ask(request);
  }
  applyPolicy(request: api.ApplyPolicyRequest, _ctx: CallContext) {
    return this.p.automation.applyPolicy(request);
  }
  listPolicies(request: api.ListPoliciesRequest, _ctx: CallContext) {
    return this.p.automation.listPolicies(request);
  }
  deletePolicy(request: api.DeletePolicyRequest, _ctx: CallContext) {
    return this.p.automation.deletePolicy(request);
  }
  listAuditRecords(request: api.ListAuditRecordsRequest, _ctx: CallContext) {
    return this.p.automation.listAuditRecords(request);
  }
  approveAction(request: api.ApproveActionRequest, ctx: CallContext) {
    return this.p.automation.approveAction(request, ctx);
  }
  putSecret(request: api.PutSecretRequest, _ctx: CallContext) {
    return this.p.secrets.putSecret(request);
  }
  getSecret(request: api.GetSecretRequest, _ctx: CallContext) {
    return this.p.secrets.getSecret(request);
  }
  listSecrets(request: api.ListSecretsRequest, _ctx: CallContext) {
    return this.p.secrets.listSecrets(request);
  }
  deleteSecret(request: api.DeleteSecretRequest, _ctx: CallContext) {
    return this.p.secrets.deleteSecret(request);
  }
  whoAmI(request: api.WhoAmIRequest, ctx: CallContext) {
    return this.security().whoAmI(request, ctx);
  }
  createApiToken(request: api.CreateApiTokenRequest, _ctx: CallContext) {
    return this.security().createApiToken(request);
  }
  listApiTokens(request: api.ListApiTokensRequest, _ctx: CallContext) {
    return this.security().listApiTokens(request);
  }
  revokeApiToken(request: api.RevokeApiTokenRequest, _ctx: CallContext) {
    return this.security().revokeApiToken(request);
  }
  createJoinToken(request: api.CreateJoinTokenRequest, _ctx: CallContext) {
    return this.security().createJoinToken(request);
  }
  listJoinTokens(request: api.ListJoinTokensRequest, _ctx: CallContext) {
    return this.security().listJoinTokens(request);
  }
  revokeJoinToken(request: api.RevokeJoinTokenRequest, _ctx: CallContext) {
    return this.security().revokeJoinToken(request);
  }
  getClusterCa(request: api.GetClusterCaRequest, _ctx: CallContext) {
    return this.security().getClusterCa(request);
  }
  joinNode(request: api.JoinNodeRequest, _ctx: CallContext) {
    return this.security().joinNode(request);
  }
  renewNodeCertificate(request: api.RenewNodeCertificateRequest, _ctx: CallContext) {
    return this.security().renewNodeCertificate(request);
  }
  issueUserCertificate(request: api.IssueUserCertificateRequest, _ctx: CallContext) {
    return this.security().issueUserCertificate(request);
  }

  private security(): SecurityService {
    if (!this.p.security) throw new PersysError("UNAVAILABLE", "security is not configured on this control plane");
    return this.p.security;
  }
}
