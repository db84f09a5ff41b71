import type { api, control } from "@persys/schema";
import type { CallCredentials, Principal } from "../auth/principal.js";

/** Who is calling, and how to give up: passed to every API method by the transports. */
export interface CallContext {
  /** Aborted when the client goes away or its deadline passes. */
  readonly signal: AbortSignal;
  /** Name of the authenticated caller (`principal.name`), set once authentication has run. */
  readonly identity?: string;
  /** The authenticated caller, set by the authorisation layer (auth/authorizing-api.ts). */
  readonly principal?: Principal;
  /** What the transport saw of the caller (verified certificate subject, bearer token); not yet checked. */
  readonly credentials?: CallCredentials;
  /** Request id for logs and events. */
  readonly requestId?: string;
}

/**
 * The public API (`persys.api.v1`) as plain async functions, implemented once by the control plane's
 * core and exposed by the gRPC and REST transports. Every method validates its input and throws a
 * `PersysError` (INVALID_ARGUMENT/INVALID_SPEC naming the field, NOT_FOUND, CONFLICT, ...) that the
 * transports turn into a gRPC status or an HTTP status with the one error body. Streams are async
 * iterables that end when `ctx.signal` aborts.
 */
export interface PersysApi {
  applyWorkload(request: api.ApplyWorkloadRequest, ctx: CallContext): Promise<api.ApplyWorkloadResponse>;
  applyWorkloads(request: api.ApplyWorkloadsRequest, ctx: CallContext): Promise<api.ApplyWorkloadsResponse>;
  getWorkload(request: api.GetWorkloadRequest, ctx: CallContext): Promise<api.GetWorkloadResponse>;
  listWorkloads(request: api.ListWorkloadsRequest, ctx: CallContext): Promise<api.ListWorkloadsResponse>;
  deleteWorkload(request: api.DeleteWorkloadRequest, ctx: CallContext): Promise<api.DeleteWorkloadResponse>;
  startWorkload(request: api.StartWorkloadRequest, ctx: CallContext): Promise<api.StartWorkloadResponse>;
  stopWorkload(request: api.StopWorkloadRequest, ctx: CallContext): Promise<api.StopWorkloadResponse>;
  restartWorkload(request: api.RestartWorkloadRequest, ctx: CallContext): Promise<api.RestartWorkloadResponse>;
  retryWorkload(request: api.RetryWorkloadRequest, ctx: CallContext): Promise<api.RetryWorkloadResponse>;
  /**
   * Moves one replica off its node through the scheduler (idempotent; UNSCHEDULABLE when no other
   * node could take it, and then nothing changes). See `MoveReplica` in workload_service.proto.
   */
  moveReplica(request: api.MoveReplicaRequest, ctx: CallContext): Promise<api.MoveReplicaResponse>;
  explainWorkload(request: api.ExplainWorkloadRequest, ctx: CallContext): Promise<api.ExplainWorkloadResponse>;
  planWorkload(request: api.PlanWorkloadRequest, ctx: CallContext): Promise<api.PlanWorkloadResponse>;
  streamWorkloadLogs(
    request: api.StreamWorkloadLogsRequest,
    ctx: CallContext,
  ): AsyncIterable<api.StreamWorkloadLogsResponse>;
  watchWorkloads(request: api.WatchWorkloadsRequest, ctx: CallContext): AsyncIterable<api.WatchWorkloadsResponse>;

  listNodes(request: api.ListNodesRequest, ctx: CallContext): Promise<api.ListNodesResponse>;
  getNode(request: api.GetNodeRequest, ctx: CallContext): Promise<api.GetNodeResponse>;
  cordonNode(request: api.CordonNodeRequest, ctx: CallContext): Promise<api.CordonNodeResponse>;
  uncordonNode(request: api.UncordonNodeRequest, ctx: CallContext): Promise<api.UncordonNodeResponse>;
  drainNode(request: api.DrainNodeRequest, ctx: CallContext): Promise<api.DrainNodeResponse>;

  getClusterSummary(request: api.GetClusterSummaryRequest, ctx: CallContext): Promise<api.GetClusterSummaryResponse>;

  listEvents(request: api.ListEventsRequest, ctx: CallContext): Promise<api.ListEventsResponse>;
  watchEvents(request: api.WatchEventsRequest, ctx: CallContext): AsyncIterable<api.WatchEventsResponse>;

  /** Intelligence (reads only; see docs/intelligence.md). NOT_FOUND for an unknown workload. */
  diagnoseWorkload(request: api.DiagnoseWorkloadRequest, ctx: CallContext): Promise<api.DiagnoseWorkloadResponse>;
  /** NOT_FOUND for an unknown node. */
  getForecast(request: api.GetForecastRequest, ctx: CallContext): Promise<api.GetForecastResponse>;
  listRecommendations(
    request: api.ListRecommendationsRequest,
    ctx: CallContext,
  ): Promise<api.ListRecommendationsResponse>;
  ask(request: api.AskRequest, ctx: CallContext): Promise<api.AskResponse>;

  /** Automation (see docs/automation.md): policies, their audit trail and manual approvals. */
  applyPolicy(request: api.ApplyPolicyRequest, ctx: CallContext): Promise<api.ApplyPolicyResponse>;
  listPolicies(request: api.ListPoliciesRequest, ctx: CallContext): Promise<api.ListPoliciesResponse>;
  deletePolicy(request: api.DeletePolicyRequest, ctx: CallContext): Promise<api.DeletePolicyResponse>;
  listAuditRecords(request: api.ListAuditRecordsRequest, ctx: CallContext): Promise<api.ListAuditRecordsResponse>;
  approveAction(request: api.ApproveActionRequest, ctx: CallContext): Promise<api.ApproveActionResponse>;

  /**
   * Secrets (see docs/secrets.md): put is create-or-update and idempotent by content; get and list
   * return metadata only, never values; delete is idempotent and refused (SECRET_IN_USE) while a
   * workload references the secret, unless forced.
   */
  putSecret(request: api.PutSecretRequest, ctx: CallContext): Promise<api.PutSecretResponse>;
  getSecret(request: api.GetSecretRequest, ctx: CallContext): Promise<api.GetSecretResponse>;
  listSecrets(request: api.ListSecretsRequest, ctx: CallContext): Promise<api.ListSecretsResponse>;
  deleteSecret(request: api.DeleteSecretRequest, ctx: CallContext): Promise<api.DeleteSecretResponse>;

  /**
   * Security (see docs/security.md): who-am-I, API tokens, one-time join tokens, node and user
   * certificates. Token values and private keys are returned once, by the call that creates them.
   * UNAVAILABLE on a server without the cluster CA or token stores.
   */
  whoAmI(request: api.WhoAmIRequest, ctx: CallContext): Promise<api.WhoAmIResponse>;
  createApiToken(request: api.CreateApiTokenRequest, ctx: CallContext): Promise<api.CreateApiTokenResponse>;
  listApiTokens(request: api.ListApiTokensRequest, ctx: CallContext): Promise<api.ListApiTokensResponse>;
  /** Idempotent. */
  revokeApiToken(request: api.RevokeApiTokenRequest, ctx: CallContext): Promise<api.RevokeApiTokenResponse>;
  createJoinToken(request: api.CreateJoinTokenRequest, ctx: CallContext): Promise<api.CreateJoinTokenResponse>;
  listJoinTokens(request: api.ListJoinTokensRequest, ctx: CallContext): Promise<api.ListJoinTokensResponse>;
  /** Idempotent. */
  revokeJoinToken(request: api.RevokeJoinTokenRequest, ctx: CallContext): Promise<api.RevokeJoinTokenResponse>;
  /** Public: the CA certificate and its `sha256:` public key pin. */
  getClusterCa(request: api.GetClusterCaRequest, ctx: CallContext): Promise<api.GetClusterCaResponse>;
  /** Public: the join token is the proof and is consumed by the first success. */
  joinNode(request: api.JoinNodeRequest, ctx: CallContext): Promise<api.JoinNodeResponse>;
  renewNodeCertificate(
    request: api.RenewNodeCertificateRequest,
    ctx: CallContext,
  ): Promise<api.RenewNodeCertificateResponse>;
  issueUserCertificate(
    request: api.IssueUserCertificateRequest,
    ctx: CallContext,
  ): Promise<api.IssueUserCertificateResponse>;
}

/**
 * The Go scheduler's `persys.control.v1.AgentControl` service (all RPCs but the unimplemented
 * `ControlStream`), implemented by the core so Go compute-agents can register and heartbeat and
 * the Go persysctl and gateway can drive workloads.
 */
export interface AgentControlApi {
  registerNode(request: control.RegisterNodeRequest, ctx: CallContext): Promise<control.RegisterNodeResponse>;
  heartbeat(request: control.HeartbeatRequest, ctx: CallContext): Promise<control.HeartbeatResponse>;
  applyWorkload(request: control.ApplyWorkloadRequest, ctx: CallContext): Promise<control.ApplyWorkloadResponse>;
  deleteWorkload(request: control.DeleteWorkloadRequest, ctx: CallContext): Promise<control.DeleteWorkloadResponse>;
  retryWorkload(request: control.RetryWorkloadRequest, ctx: CallContext): Promise<control.RetryWorkloadResponse>;
  submitAutomationSuggestion(
    request: control.SubmitAutomationSuggestionRequest,
    ctx: CallContext,
  ): Promise<control.SubmitAutomationSuggestionResponse>;
  listNodes(request: control.ListNodesRequest, ctx: CallContext): Promise<control.ListNodesResponse>;
  getNode(request: control.GetNodeRequest, ctx: CallContext): Promise<control.GetNodeResponse>;
  listWorkloads(request: control.ListWorkloadsRequest, ctx: CallContext): Promise<control.ListWorkloadsResponse>;
  getWorkload(request: control.GetWorkloadRequest, ctx: CallContext): Promise<control.GetWorkloadResponse>;
  getClusterSummary(
    request: control.GetClusterSummaryRequest,
    ctx: CallContext,
  ): Promise<control.GetClusterSummaryResponse>;
}

/** Health of the process for `/healthz`, `/readyz` and gRPC health checking. */
export interface ServerHealth {
  /** The process runs (liveness). */
  live(): boolean;
  /** The process can serve requests: stores reachable. `reason` says what is missing. */
  ready(): { ready: boolean; reason?: string; details?: Record<string, string> };
}
