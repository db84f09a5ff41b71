import type { PersysApi } from "../persys-api.js";

/** How a route's body maps into the request message. */
export type BodyMapping =
  /** The body is the whole request minus the fields taken from the path. */
  | { readonly kind: "rest"; readonly required: boolean }
  /** The body is one field of the request (e.g. `workload`). */
  | { readonly kind: "field"; readonly field: string };

/** One `/v1` route: an HTTP shape over one PersysApi method. Handlers are built from it generically. */
export interface V1Route {
  readonly method: "GET" | "PUT" | "POST" | "DELETE";
  /** Fastify path syntax; path parameters are named after the request field they fill. */
  readonly url: string;
  /** The PersysApi method it calls; also the OpenAPI operationId (suffixed when one RPC has two routes). */
  readonly rpc: keyof PersysApi;
  readonly operationId?: string;
  /** Request and response message names in persys.api.v1. */
  readonly request: string;
  readonly response: string;
  readonly summary: string;
  readonly tag: "workloads" | "nodes" | "cluster" | "events" | "intelligence" | "automation" | "secrets" | "security";
  /** Path parameter → request field path (dotted, JSON names). */
  readonly params?: Readonly<Record<string, string>>;
  /** Query parameter → request field path. */
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: BodyMapping;
  /** Error code when the body fails its schema (workload specs are INVALID_SPEC). */
  readonly bodyCode?: "INVALID_SPEC" | "INVALID_ARGUMENT";
  /** Streaming shape: server-sent events (watches), or NDJSON/SSE by Accept (logs). */
  readonly stream?: "sse" | "ndjson-or-sse";
  /** SSE resume: the request field `Last-Event-ID` fills, and the response field that is each event's id. */
  readonly resume?: { readonly field: string; readonly eventId: string };
  /** `If-Match` / `If-None-Match: *` fill `expectedRevision` (apply only). */
  readonly preconditions?: boolean;
}

const workloadId = { workloadId: "workloadId" } as const;
const nodeId = { nodeId: "nodeId" } as const;
const paging = { pageSize: "pageSize", pageToken: "pageToken" } as const;
const eventFilter = {
  workloadId: "filter.workloadId",
  nodeId: "filter.nodeId",
  types: "filter.types",
  minSeverity: "filter.minSeverity",
} as const;
const optionalBody = { kind: "rest", required: false } as const;

const actionSummaries = {
  start: "Set the desired state to RUNNING (no-op when running).",
  stop: "Set the desired state to STOPPED; replicas keep their nodes (no-op when stopped).",
  restart:
    "Restart replicas in place (body `{replicaIndex}` for one), honouring the update strategy; " +
    '`{"mode": "RESTART_MODE_REBOOT"}` reboots them (VM guest, container) instead of recreating them.',
  retry: "Clear the retry backoff of failed or pending replicas (body `{replicaIndex}` for one).",
} as const;

const nodeActionSummaries = {
  cordon: "Stop new placements on the node (body `{reason}`); running replicas stay. Idempotent.",
  uncordon: "Allow placements again and end a drain. Idempotent.",
  drain: "Cordon the node and re-place its replicas elsewhere (body `{reason, dryRun}`).",
} as const;

/**
 * Every `/v1` route. Resource style: workloads are created or updated by `PUT` of the whole
 * workload (idempotent by id and content), actions are `POST .../{action}`, reads are `GET`, and
 * watches are server-sent event streams. Field paths in error details are request paths
 * (`workload.container.ports[0].hostPort`).
 */
export const v1Routes: readonly V1Route[] = [
  {
    method: "PUT",
    url: "/v1/workloads/:workloadId",
    rpc: "applyWorkload",
    request: "ApplyWorkloadRequest",
    response: "ApplyWorkloadResponse",
    summary:
      "Create or update a workload (idempotent by id and content). 201 when created, 200 otherwise. " +
      '`If-Match: "<revision>"` applies only over that revision; `If-None-Match: *` only creates.',
    tag: "workloads",
    params: { workloadId: "workload.id" },
    query: { expectedRevision: "expectedRevision" },
    body: { kind: "field", field: "workload" },
    bodyCode: "INVALID_SPEC",
    preconditions: true,
  },
  {
    method: "POST",
    url: "/v1/workloads",
    rpc: "applyWorkloads",
    request: "ApplyWorkloadsRequest",
    response: "ApplyWorkloadsResponse",
    summary:
      "Apply many workloads at once (body `{workloads: [...]}`, at most 1,000): all are checked before " +
      "anything is written, errors name `workloads[i]...`; each is applied as PUT would, idempotent by id " +
      "and content. Results in request order.",
    tag: "workloads",
    body: { kind: "rest", required: true },
    bodyCode: "INVALID_SPEC",
  },
  {
    method: "GET",
    url: "/v1/workloads/:workloadId",
    rpc: "getWorkload",
    request: "GetWorkloadRequest",
    response: "GetWorkloadResponse",
    summary: "Read one workload with its status (view FULL unless asked otherwise).",
    tag: "workloads",
    params: workloadId,
    query: { view: "view" },
  },
  {
    method: "GET",
    url: "/v1/workloads",
    rpc: "listWorkloads",
    request: "ListWorkloadsRequest",
    response: "ListWorkloadsResponse",
    summary: "List workloads matching every filter, ordered by id, one page at a time.",
    tag: "workloads",
    query: { kind: "kind", state: "state", nodeId: "nodeId", labelSelector: "labelSelector", ...paging, view: "view" },
  },
  {
    method: "DELETE",
    url: "/v1/workloads/:workloadId",
    rpc: "deleteWorkload",
    request: "DeleteWorkloadRequest",
    response: "DeleteWorkloadResponse",
    summary:
      "Delete a workload (its replicas are removed asynchronously). `allowMissing=true` makes a missing one a success.",
    tag: "workloads",
    params: workloadId,
    query: { allowMissing: "allowMissing" },
  },
  ...(["start", "stop", "restart", "retry"] as const).map(
    (action): V1Route => ({
      method: "POST",
      url: `/v1/workloads/:workloadId/${action}`,
      rpc: `${action}Workload`,
      request: `${capitalise(action)}WorkloadRequest`,
      response: `${capitalise(action)}WorkloadResponse`,
      summary: actionSummaries[action],
      tag: "workloads",
      params: workloadId,
      body: optionalBody,
    }),
  ),
  {
    method: "POST",
    url: "/v1/workloads/:workloadId/replicas/:replicaIndex/move",
    rpc: "moveReplica",
    request: "MoveReplicaRequest",
    response: "MoveReplicaResponse",
    summary:
      "Move one replica off its node (body `{fromNode, toNode, reason}`, all optional): the scheduler " +
      "re-places it elsewhere, then the old copy stops. Idempotent (`moved: false` when nothing changed).",
    tag: "workloads",
    params: { workloadId: "workloadId", replicaIndex: "replicaIndex" },
    body: optionalBody,
  },
  {
    method: "GET",
    url: "/v1/workloads/:workloadId/explain",
    rpc: "explainWorkload",
    request: "ExplainWorkloadRequest",
    response: "ExplainWorkloadResponse",
    summary: "The latest placement decision of every replica, with the full diagnosis.",
    tag: "workloads",
    params: workloadId,
  },
  {
    method: "GET",
    url: "/v1/workloads/:workloadId/logs",
    rpc: "streamWorkloadLogs",
    request: "StreamWorkloadLogsRequest",
    response: "StreamWorkloadLogsResponse",
    summary:
      "Replica logs as NDJSON (one StreamWorkloadLogsResponse per line), or as server-sent events with " +
      "`Accept: text/event-stream`. `follow=true` keeps the stream open.",
    tag: "workloads",
    params: workloadId,
    query: {
      replicaIndex: "replicaIndex",
      follow: "follow",
      tailLines: "tailLines",
      since: "since",
      service: "service",
    },
    stream: "ndjson-or-sse",
  },
  {
    method: "GET",
    url: "/v1/workloads/:workloadId/events",
    rpc: "listEvents",
    operationId: "listWorkloadEvents",
    request: "ListEventsRequest",
    response: "ListEventsResponse",
    summary: "Recorded events of one workload, oldest first.",
    tag: "workloads",
    params: { workloadId: "filter.workloadId" },
    query: {
      nodeId: "filter.nodeId",
      types: "filter.types",
      minSeverity: "filter.minSeverity",
      since: "since",
      ...paging,
    },
  },
  {
    method: "POST",
    url: "/v1/plan",
    rpc: "planWorkload",
    request: "PlanWorkloadRequest",
    response: "PlanWorkloadResponse",
    summary: "Dry run of apply: validate the workload and run the scheduler without writing anything.",
    tag: "workloads",
    body: { kind: "rest", required: true },
    bodyCode: "INVALID_SPEC",
  },
  {
    method: "GET",
    url: "/v1/watch/workloads",
    rpc: "watchWorkloads",
    request: "WatchWorkloadsRequest",
    response: "WatchWorkloadsResponse",
    summary:
      "Server-sent events of workload changes; each event's id is its store revision. Resume with " +
      "`Last-Event-ID` (or `afterStoreRevision`).",
    tag: "workloads",
    query: {
      workloadId: "workloadId",
      kind: "kind",
      labelSelector: "labelSelector",
      afterStoreRevision: "afterStoreRevision",
      view: "view",
    },
    stream: "sse",
    resume: { field: "afterStoreRevision", eventId: "storeRevision" },
  },
  {
    method: "GET",
    url: "/v1/nodes",
    rpc: "listNodes",
    request: "ListNodesRequest",
    response: "ListNodesResponse",
    summary: "List nodes matching every filter, ordered by id.",
    tag: "nodes",
    query: { state: "state", labelSelector: "labelSelector", capability: "capability", ...paging },
  },
  {
    method: "GET",
    url: "/v1/nodes/:nodeId",
    rpc: "getNode",
    request: "GetNodeRequest",
    response: "GetNodeResponse",
    summary: "Read one node.",
    tag: "nodes",
    params: nodeId,
  },
  ...(["cordon", "uncordon", "drain"] as const).map(
    (action): V1Route => ({
      method: "POST",
      url: `/v1/nodes/:nodeId/${action}`,
      rpc: `${action}Node`,
      request: `${capitalise(action)}NodeRequest`,
      response: `${capitalise(action)}NodeResponse`,
      summary: nodeActionSummaries[action],
      tag: "nodes",
      params: nodeId,
      body: optionalBody,
    }),
  ),
  {
    method: "GET",
    url: "/v1/cluster/summary",
    rpc: "getClusterSummary",
    request: "GetClusterSummaryRequest",
    response: "GetClusterSummaryResponse",
    summary: "Counts and capacity of the whole cluster.",
    tag: "cluster",
  },
  {
    method: "GET",
    url: "/v1/events",
    rpc: "listEvents",
    request: "ListEventsRequest",
    response: "ListEventsResponse",
    summary: "Recorded events matching every filter, oldest first.",
    tag: "events",
    query: { ...eventFilter, since: "since", ...paging },
  },
  {
    method: "GET",
    url: "/v1/watch/events",
    rpc: "watchEvents",
    request: "WatchEventsRequest",
    response: "WatchEventsResponse",
    summary:
      "Server-sent events as they are recorded; each event's id is the event id. Resume with " +
      "`Last-Event-ID` (or `afterEventId`).",
    tag: "events",
    query: { ...eventFilter, afterEventId: "afterEventId" },
    stream: "sse",
    resume: { field: "afterEventId", eventId: "event.id" },
  },
  {
    method: "GET",
    url: "/v1/workloads/:workloadId/diagnosis",
    rpc: "diagnoseWorkload",
    request: "DiagnoseWorkloadRequest",
    response: "DiagnoseWorkloadResponse",
    summary:
      "Why the workload is where it is: the chain of causes with cited evidence (event ids, diagnoses, " +
      "node states), and the window's most relevant events and remediations. Reads only.",
    tag: "intelligence",
    params: workloadId,
    query: { windowSeconds: "windowSeconds" },
  },
  {
    method: "GET",
    url: "/v1/forecast",
    rpc: "getForecast",
    request: "GetForecastRequest",
    response: "GetForecastResponse",
    summary:
      "Time until cpu, memory and disk reservations or usage run out, per node and for the cluster, " +
      "with the method, fit and confidence band.",
    tag: "intelligence",
    query: { nodeId: "nodeId", windowSeconds: "windowSeconds", method: "method" },
  },
  {
    method: "GET",
    url: "/v1/recommendations",
    rpc: "listRecommendations",
    request: "ListRecommendationsRequest",
    response: "ListRecommendationsResponse",
    summary: "Right-sizing, rebalancing, flapping workloads and nodes at risk, each with evidence and expected effect.",
    tag: "intelligence",
    query: { windowSeconds: "windowSeconds" },
  },
  {
    method: "POST",
    url: "/v1/ask",
    rpc: "ask",
    request: "AskRequest",
    response: "AskResponse",
    summary: "Answer a question (body `{question}`) from the findings of diagnose, forecast and recommendations.",
    tag: "intelligence",
    body: { kind: "rest", required: true },
  },
  {
    method: "PUT",
    url: "/v1/policies/:policyId",
    rpc: "applyPolicy",
    request: "ApplyPolicyRequest",
    response: "ApplyPolicyResponse",
    summary: "Create or replace an automation policy (idempotent by id and content).",
    tag: "automation",
    params: { policyId: "policy.id" },
    body: { kind: "field", field: "policy" },
  },
  {
    method: "GET",
    url: "/v1/policies",
    rpc: "listPolicies",
    request: "ListPoliciesRequest",
    response: "ListPoliciesResponse",
    summary: "Every automation policy, ordered by id.",
    tag: "automation",
  },
  {
    method: "DELETE",
    url: "/v1/policies/:policyId",
    rpc: "deletePolicy",
    request: "DeletePolicyRequest",
    response: "DeletePolicyResponse",
    summary: "Delete a policy (`allowMissing=true` makes a missing one a success); its audit records stay.",
    tag: "automation",
    params: { policyId: "policyId" },
    query: { allowMissing: "allowMissing" },
  },
  {
    method: "GET",
    url: "/v1/audit",
    rpc: "listAuditRecords",
    request: "ListAuditRecordsRequest",
    response: "ListAuditRecordsResponse",
    summary: "Automation audit records, newest first (`awaitingApproval=true`: only undecided approvals).",
    tag: "automation",
    query: { policyId: "policyId", awaitingApproval: "awaitingApproval", limit: "limit" },
  },
  {
    method: "POST",
    url: "/v1/approvals/:approvalId",
    rpc: "approveAction",
    request: "ApproveActionRequest",
    response: "ApproveActionResponse",
    summary: "Run an action awaiting manual approval (body `{reject: true}` rejects it).",
    tag: "automation",
    params: { approvalId: "approvalId" },
    body: optionalBody,
  },
  {
    method: "PUT",
    url: "/v1/secrets/:name",
    rpc: "putSecret",
    request: "PutSecretRequest",
    response: "PutSecretResponse",
    summary:
      "Create or replace a secret (body `{data: {key: base64}, stringData: {key: text}}`). Idempotent: " +
      "the same data keeps the version. The answer is metadata only, never values.",
    tag: "secrets",
    params: { name: "name" },
    body: { kind: "rest", required: true },
  },
  {
    method: "GET",
    url: "/v1/secrets",
    rpc: "listSecrets",
    request: "ListSecretsRequest",
    response: "ListSecretsResponse",
    summary: "Every secret's metadata (keys, version, times, workloads using it), ordered by name; never values.",
    tag: "secrets",
  },
  {
    method: "GET",
    url: "/v1/secrets/:name",
    rpc: "getSecret",
    request: "GetSecretRequest",
    response: "GetSecretResponse",
    summary: "One secret's metadata; never its values.",
    tag: "secrets",
    params: { name: "name" },
  },
  {
    method: "DELETE",
    url: "/v1/secrets/:name",
    rpc: "deleteSecret",
    request: "DeleteSecretRequest",
    response: "DeleteSecretResponse",
    summary:
      "Delete a secret (a missing one is a success). 409 SECRET_IN_USE naming the workloads while any " +
      "references it, unless `force=true`.",
    tag: "secrets",
    params: { name: "name" },
    query: { force: "force" },
  },
  {
    method: "GET",
    url: "/v1/whoami",
    rpc: "whoAmI",
    request: "WhoAmIRequest",
    response: "WhoAmIResponse",
    summary: "The caller as the server authenticated it: name, role, how (certificate, token, development), node.",
    tag: "security",
  },
  {
    method: "POST",
    url: "/v1/tokens",
    rpc: "createApiToken",
    request: "CreateApiTokenRequest",
    response: "CreateApiTokenResponse",
    summary:
      "Create an API bearer token (body `{name, role, ttlSeconds}`; role admin, operator or viewer). " +
      "The token value is in this answer only. Admin.",
    tag: "security",
    body: { kind: "rest", required: true },
  },
  {
    method: "GET",
    url: "/v1/tokens",
    rpc: "listApiTokens",
    request: "ListApiTokensRequest",
    response: "ListApiTokensResponse",
    summary: "Every API token's id, name, role and times; never the secret. Admin.",
    tag: "security",
  },
  {
    method: "DELETE",
    url: "/v1/tokens/:id",
    rpc: "revokeApiToken",
    request: "RevokeApiTokenRequest",
    response: "RevokeApiTokenResponse",
    summary: "Revoke an API token (a missing one is a success); calls with it fail within seconds. Admin.",
    tag: "security",
    params: { id: "id" },
  },
  {
    method: "POST",
    url: "/v1/join-tokens",
    rpc: "createJoinToken",
    request: "CreateJoinTokenRequest",
    response: "CreateJoinTokenResponse",
    summary:
      "Create a one-time join token for an agent (body `{ttlSeconds, description}`, default 1 h), with the " +
      "CA pin agents check. The token value is in this answer only. Admin.",
    tag: "security",
    body: optionalBody,
  },
  {
    method: "GET",
    url: "/v1/join-tokens",
    rpc: "listJoinTokens",
    request: "ListJoinTokensRequest",
    response: "ListJoinTokensResponse",
    summary:
      "Every join token kept (used and expired ones for a day): expiry, whether used and by which node; never the secret. Admin.",
    tag: "security",
  },
  {
    method: "DELETE",
    url: "/v1/join-tokens/:id",
    rpc: "revokeJoinToken",
    request: "RevokeJoinTokenRequest",
    response: "RevokeJoinTokenResponse",
    summary: "Revoke a join token (a missing one is a success). Admin.",
    tag: "security",
    params: { id: "id" },
  },
  {
    method: "GET",
    url: "/v1/cluster/ca",
    rpc: "getClusterCa",
    request: "GetClusterCaRequest",
    response: "GetClusterCaResponse",
    summary: "The cluster CA certificate and the `sha256:` pin of its public key. Public.",
    tag: "security",
  },
  {
    method: "POST",
    url: "/v1/nodes/:nodeId/join",
    rpc: "joinNode",
    request: "JoinNodeRequest",
    response: "JoinNodeResponse",
    summary:
      "Exchange a join token (body `{joinToken, csrPem?, hosts?}`) for the node's agent certificate. Public: " +
      "the token is the proof and works once; used, expired or unknown tokens are 401. Audited.",
    tag: "security",
    params: nodeId,
    body: { kind: "rest", required: true },
  },
  {
    method: "POST",
    url: "/v1/nodes/:nodeId/certificate",
    rpc: "renewNodeCertificate",
    request: "RenewNodeCertificateRequest",
    response: "RenewNodeCertificateResponse",
    summary:
      "A new certificate for the calling agent's own node (body `{csrPem?, hosts?}`). Agent of that node, or admin.",
    tag: "security",
    params: nodeId,
    body: optionalBody,
  },
  {
    method: "POST",
    url: "/v1/users/:name/certificate",
    rpc: "issueUserCertificate",
    request: "IssueUserCertificateRequest",
    response: "IssueUserCertificateResponse",
    summary: "A client certificate for a person or tool (body `{role, ttlSeconds}`) with a new private key. Admin.",
    tag: "security",
    params: { name: "name" },
    body: { kind: "rest", required: true },
  },
];

function capitalise<S extends string>(word: S): Capitalize<S> {
  return `${word.charAt(0).toUpperCase()}${word.slice(1)}` as Capitalize<S>;
}
