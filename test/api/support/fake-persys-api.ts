// An in-memory PersysApi for the transport tests: just enough behaviour (NOT_FOUND, idempotent
// apply, pagination, streams that end on abort, resumable watches) to tell right mapping from wrong.
import { api, PersysError } from "@persys/schema";
import type { CallContext, PersysApi } from "../../../controlplane/src/api/persys-api.js";

export interface RecordedCall {
  readonly method: string;
  readonly request: unknown;
  readonly ctx: CallContext;
}

/** A broadcast channel: live items for every open stream, ending each stream when its signal aborts. */
class Live<T> {
  private readonly waiters = new Set<(item: T) => void>();
  publish(item: T): void {
    for (const waiter of this.waiters) waiter(item);
  }
  async *follow(signal: AbortSignal): AsyncGenerator<T> {
    const queue: T[] = [];
    let wake: (() => void) | undefined;
    const push = (item: T) => {
      queue.push(item);
      wake?.();
    };
    this.waiters.add(push);
    const onAbort = () => wake?.();
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted) {
        const next = queue.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      this.waiters.delete(push);
      signal.removeEventListener("abort", onAbort);
    }
  }
  get listeners(): number {
    return this.waiters.size;
  }
}

export class FakePersysApi implements PersysApi {
  readonly calls: RecordedCall[] = [];
  readonly workloads = new Map<string, api.Workload>();
  readonly nodes = new Map<string, api.Node>();
  readonly events: api.Event[] = [];
  readonly watchHistory: api.WatchWorkloadsResponse[] = [];
  readonly liveWorkloads = new Live<api.WatchWorkloadsResponse>();
  readonly liveEvents = new Live<api.Event>();
  readonly liveLogs = new Live<api.StreamWorkloadLogsResponse>();
  logLines: api.StreamWorkloadLogsResponse[] = [];
  /** Thrown by log streams after the stored lines (a node that goes away mid-stream). */
  logFailure: PersysError | undefined;
  /** Revisions at or below this are compacted: watching after them fails with COMPACTED. */
  compactedThrough = 0;
  storeRevision = 100;
  /** Thrown by the next call of the named method (then cleared). */
  private readonly failures = new Map<string, unknown>();

  failNext(method: keyof PersysApi, error: unknown): void {
    this.failures.set(method, error);
  }

  private enter(method: string, request: unknown, ctx: CallContext): void {
    this.calls.push({ method, request, ctx });
    const failure = this.failures.get(method);
    if (failure !== undefined) {
      this.failures.delete(method);
      throw failure;
    }
  }

  lastCall(method: string): RecordedCall | undefined {
    return this.calls.filter((c) => c.method === method).at(-1);
  }

  private workload(id: string): api.Workload {
    const found = this.workloads.get(id);
    if (!found) throw new PersysError("NOT_FOUND", `workload "${id}" not found`);
    return found;
  }

  private node(id: string): api.Node {
    const found = this.nodes.get(id);
    if (!found) throw new PersysError("NOT_FOUND", `node "${id}" not found`);
    return found;
  }

  async applyWorkload(request: api.ApplyWorkloadRequest, ctx: CallContext): Promise<api.ApplyWorkloadResponse> {
    this.enter("applyWorkload", request, ctx);
    const input = request.workload;
    if (!input?.id)
      throw new PersysError("INVALID_SPEC", "id is required", {
        details: [{ path: "workload.id", reason: "is required" }],
      });
    const existing = this.workloads.get(input.id);
    if (request.expectedRevision === "" && existing)
      throw new PersysError("ALREADY_EXISTS", `workload "${input.id}" exists`);
    if (request.expectedRevision && existing?.status?.revision !== request.expectedRevision) {
      throw new PersysError("CONFLICT", `workload "${input.id}" is at another revision`);
    }
    const revision = `rev-${JSON.stringify(api.Workload.toJSON({ ...input, status: undefined })).length}`;
    const changed = existing?.status?.revision !== revision;
    const stored = api.Workload.fromPartial({
      ...input,
      status: {
        revision,
        generation: (existing?.status?.generation ?? 0) + (changed ? 1 : 0),
        state: api.WorkloadState.WORKLOAD_STATE_PENDING,
        createdAt: new Date("2025-01-02T03:04:05.000Z"),
      },
    });
    this.workloads.set(input.id, stored);
    return { workload: stored, changed, created: !existing };
  }

  async applyWorkloads(request: api.ApplyWorkloadsRequest, ctx: CallContext): Promise<api.ApplyWorkloadsResponse> {
    this.enter("applyWorkloads", request, ctx);
    const results: api.ApplyWorkloadResponse[] = [];
    for (const workload of request.workloads) results.push(await this.applyWorkload({ workload }, ctx));
    return { results };
  }

  async getWorkload(request: api.GetWorkloadRequest, ctx: CallContext): Promise<api.GetWorkloadResponse> {
    this.enter("getWorkload", request, ctx);
    return { workload: this.workload(request.workloadId) };
  }

  async listWorkloads(request: api.ListWorkloadsRequest, ctx: CallContext): Promise<api.ListWorkloadsResponse> {
    this.enter("listWorkloads", request, ctx);
    const all = [...this.workloads.values()]
      .filter((w) => request.kind === 0 || w.kind === request.kind)
      .sort((a, b) => a.id.localeCompare(b.id));
    const size = request.pageSize || 100;
    const start = request.pageToken ? Number(request.pageToken) : 0;
    const page = all.slice(start, start + size);
    const next = start + size < all.length ? String(start + size) : "";
    return { workloads: page, nextPageToken: next, storeRevision: this.storeRevision };
  }

  async deleteWorkload(request: api.DeleteWorkloadRequest, ctx: CallContext): Promise<api.DeleteWorkloadResponse> {
    this.enter("deleteWorkload", request, ctx);
    const found = this.workloads.get(request.workloadId);
    if (!found) {
      if (request.allowMissing) return {};
      throw new PersysError("NOT_FOUND", `workload "${request.workloadId}" not found`);
    }
    this.workloads.delete(request.workloadId);
    return { workload: { ...found, status: { ...found.status!, state: api.WorkloadState.WORKLOAD_STATE_DELETING } } };
  }

  async startWorkload(request: api.StartWorkloadRequest, ctx: CallContext): Promise<api.StartWorkloadResponse> {
    this.enter("startWorkload", request, ctx);
    return { workload: this.workload(request.workloadId) };
  }

  async stopWorkload(request: api.StopWorkloadRequest, ctx: CallContext): Promise<api.StopWorkloadResponse> {
    this.enter("stopWorkload", request, ctx);
    return { workload: this.workload(request.workloadId) };
  }

  async restartWorkload(request: api.RestartWorkloadRequest, ctx: CallContext): Promise<api.RestartWorkloadResponse> {
    this.enter("restartWorkload", request, ctx);
    return { workload: this.workload(request.workloadId) };
  }

  async retryWorkload(request: api.RetryWorkloadRequest, ctx: CallContext): Promise<api.RetryWorkloadResponse> {
    this.enter("retryWorkload", request, ctx);
    const workload = this.workload(request.workloadId);
    return { workload, retriedReplicas: request.replicaIndex === undefined ? [0, 1] : [request.replicaIndex] };
  }

  async moveReplica(request: api.MoveReplicaRequest, ctx: CallContext): Promise<api.MoveReplicaResponse> {
    this.enter("moveReplica", request, ctx);
    return { workload: this.workload(request.workloadId), moved: true, fromNode: "n1" };
  }

  async explainWorkload(request: api.ExplainWorkloadRequest, ctx: CallContext): Promise<api.ExplainWorkloadResponse> {
    this.enter("explainWorkload", request, ctx);
    const workload = this.workload(request.workloadId);
    return {
      workloadId: workload.id,
      revision: workload.status?.revision ?? "",
      replicas: [
        api.ReplicaExplanation.fromPartial({
          replicaIndex: 0,
          state: api.ReplicaState.REPLICA_STATE_PENDING,
          diagnosis: {
            nodesEvaluated: 12,
            message: "0/12 nodes are available: 7 insufficient memory, 5 missing capability kvm.",
            filterCounts: [{ plugin: "resources-fit", reason: "insufficient memory", count: 7 }],
            exhaustion: [
              {
                dimension: api.ResourceDimension.RESOURCE_DIMENSION_MEMORY,
                needed: 2048,
                bestAvailable: 1536,
                unit: "MiB",
                nodesShort: 7,
              },
            ],
          },
        }),
      ],
    };
  }

  async planWorkload(request: api.PlanWorkloadRequest, ctx: CallContext): Promise<api.PlanWorkloadResponse> {
    this.enter("planWorkload", request, ctx);
    if (!request.workload?.id)
      throw new PersysError("INVALID_SPEC", "id is required", {
        details: [{ path: "workload.id", reason: "is required" }],
      });
    return { workload: request.workload, revision: "rev-plan", changed: true, replicas: [], schedulable: true };
  }

  async *streamWorkloadLogs(
    request: api.StreamWorkloadLogsRequest,
    ctx: CallContext,
  ): AsyncGenerator<api.StreamWorkloadLogsResponse> {
    this.enter("streamWorkloadLogs", request, ctx);
    this.workload(request.workloadId);
    const lines = request.tailLines === undefined ? this.logLines : this.logLines.slice(-request.tailLines);
    for (const line of lines) yield line;
    if (this.logFailure) throw this.logFailure;
    if (request.follow) yield* this.liveLogs.follow(ctx.signal);
  }

  async *watchWorkloads(
    request: api.WatchWorkloadsRequest,
    ctx: CallContext,
  ): AsyncGenerator<api.WatchWorkloadsResponse> {
    this.enter("watchWorkloads", request, ctx);
    if (request.afterStoreRevision > 0 && request.afterStoreRevision <= this.compactedThrough) {
      throw new PersysError("COMPACTED", `revision ${request.afterStoreRevision} is compacted`);
    }
    for (const item of this.watchHistory) if (item.storeRevision > request.afterStoreRevision) yield item;
    yield* this.liveWorkloads.follow(ctx.signal);
  }

  async listNodes(request: api.ListNodesRequest, ctx: CallContext): Promise<api.ListNodesResponse> {
    this.enter("listNodes", request, ctx);
    return {
      nodes: [...this.nodes.values()].filter((n) => request.state === 0 || n.state === request.state),
      nextPageToken: "",
    };
  }

  async getNode(request: api.GetNodeRequest, ctx: CallContext): Promise<api.GetNodeResponse> {
    this.enter("getNode", request, ctx);
    return { node: this.node(request.nodeId) };
  }

  async cordonNode(request: api.CordonNodeRequest, ctx: CallContext): Promise<api.CordonNodeResponse> {
    this.enter("cordonNode", request, ctx);
    const node = { ...this.node(request.nodeId), cordoned: true, cordonReason: request.reason };
    this.nodes.set(node.id, node);
    return { node };
  }

  async uncordonNode(request: api.UncordonNodeRequest, ctx: CallContext): Promise<api.UncordonNodeResponse> {
    this.enter("uncordonNode", request, ctx);
    const node = { ...this.node(request.nodeId), cordoned: false, draining: false, cordonReason: "" };
    this.nodes.set(node.id, node);
    return { node };
  }

  async drainNode(request: api.DrainNodeRequest, ctx: CallContext): Promise<api.DrainNodeResponse> {
    this.enter("drainNode", request, ctx);
    const node = this.node(request.nodeId);
    return {
      node: request.dryRun ? node : { ...node, cordoned: true, draining: true },
      evicted: [{ workloadId: "web", replicaIndex: 1 }],
    };
  }

  async getClusterSummary(
    request: api.GetClusterSummaryRequest,
    ctx: CallContext,
  ): Promise<api.GetClusterSummaryResponse> {
    this.enter("getClusterSummary", request, ctx);
    return {
      summary: api.ClusterSummary.fromPartial({
        nodesTotal: this.nodes.size,
        workloadsTotal: this.workloads.size,
        leaderId: "cp-1",
        generatedAt: new Date("2025-01-02T03:04:05.000Z"),
      }),
    };
  }

  async listEvents(request: api.ListEventsRequest, ctx: CallContext): Promise<api.ListEventsResponse> {
    this.enter("listEvents", request, ctx);
    const filter = request.filter;
    const events = this.events.filter(
      (e) =>
        (!filter?.workloadId || e.workloadId === filter.workloadId) &&
        (!filter?.types.length || filter.types.includes(e.type)) &&
        (!request.since || (e.time ?? new Date(0)) >= request.since),
    );
    return { events, nextPageToken: "" };
  }

  async *watchEvents(request: api.WatchEventsRequest, ctx: CallContext): AsyncGenerator<api.WatchEventsResponse> {
    this.enter("watchEvents", request, ctx);
    if (request.afterEventId === "expired")
      throw new PersysError("COMPACTED", "event expired is older than the retention");
    if (request.afterEventId) {
      const at = this.events.findIndex((e) => e.id === request.afterEventId);
      for (const event of this.events.slice(at + 1)) yield { event };
    }
    for await (const event of this.liveEvents.follow(ctx.signal)) yield { event };
  }

  // Intelligence: just enough to check the transports' mapping (the real rules are tested in test/intelligence).
  async diagnoseWorkload(
    request: api.DiagnoseWorkloadRequest,
    ctx: CallContext,
  ): Promise<api.DiagnoseWorkloadResponse> {
    this.enter("diagnoseWorkload", request, ctx);
    const workload = this.workloads.get(request.workloadId);
    if (!workload) throw new PersysError("NOT_FOUND", `workload ${request.workloadId} not found`);
    return {
      diagnosis: api.WorkloadDiagnosis.fromPartial({ workloadId: workload.id, summary: `${workload.id} is running` }),
    };
  }

  async getForecast(request: api.GetForecastRequest, ctx: CallContext): Promise<api.GetForecastResponse> {
    this.enter("getForecast", request, ctx);
    return { forecasts: [], generatedAt: new Date("2025-01-02T03:04:05.000Z") };
  }

  async listRecommendations(
    request: api.ListRecommendationsRequest,
    ctx: CallContext,
  ): Promise<api.ListRecommendationsResponse> {
    this.enter("listRecommendations", request, ctx);
    return { recommendations: [], generatedAt: new Date("2025-01-02T03:04:05.000Z") };
  }

  async ask(request: api.AskRequest, ctx: CallContext): Promise<api.AskResponse> {
    this.enter("ask", request, ctx);
    if (!request.question) throw new PersysError("INVALID_ARGUMENT", "question is required");
    return api.AskResponse.fromPartial({ answer: "nothing stands in the way", intent: "summary" });
  }

  readonly policies = new Map<string, api.Policy>();

  async applyPolicy(request: api.ApplyPolicyRequest, ctx: CallContext): Promise<api.ApplyPolicyResponse> {
    this.enter("applyPolicy", request, ctx);
    if (!request.policy?.id) throw new PersysError("INVALID_ARGUMENT", "policy.id is required");
    const created = !this.policies.has(request.policy.id);
    this.policies.set(request.policy.id, request.policy);
    return { policy: request.policy, created };
  }

  async listPolicies(request: api.ListPoliciesRequest, ctx: CallContext): Promise<api.ListPoliciesResponse> {
    this.enter("listPolicies", request, ctx);
    return { policies: [...this.policies.values()] };
  }

  async deletePolicy(request: api.DeletePolicyRequest, ctx: CallContext): Promise<api.DeletePolicyResponse> {
    this.enter("deletePolicy", request, ctx);
    if (!this.policies.delete(request.policyId) && !request.allowMissing) {
      throw new PersysError("NOT_FOUND", `policy ${request.policyId} not found`);
    }
    return {};
  }

  async listAuditRecords(
    request: api.ListAuditRecordsRequest,
    ctx: CallContext,
  ): Promise<api.ListAuditRecordsResponse> {
    this.enter("listAuditRecords", request, ctx);
    return { records: [] };
  }

  async approveAction(request: api.ApproveActionRequest, ctx: CallContext): Promise<api.ApproveActionResponse> {
    this.enter("approveAction", request, ctx);
    throw new PersysError("NOT_FOUND", `no action awaits approval ${request.approvalId}`);
  }

  // Secrets: metadata only (the real service is tested in controlplane/src/secrets and test/security).
  async putSecret(request: api.PutSecretRequest, ctx: CallContext): Promise<api.PutSecretResponse> {
    this.enter("putSecret", request, ctx);
    const keys = [...Object.keys(request.data), ...Object.keys(request.stringData)].sort();
    return { secret: { name: request.name, keys, version: 1, usedBy: [] }, created: true, changed: true };
  }
  async getSecret(request: api.GetSecretRequest, ctx: CallContext): Promise<api.GetSecretResponse> {
    this.enter("getSecret", request, ctx);
    throw new PersysError("NOT_FOUND", `secret ${request.name} not found`);
  }
  async listSecrets(request: api.ListSecretsRequest, ctx: CallContext): Promise<api.ListSecretsResponse> {
    this.enter("listSecrets", request, ctx);
    return { secrets: [] };
  }
  async deleteSecret(request: api.DeleteSecretRequest, ctx: CallContext): Promise<api.DeleteSecretResponse> {
    this.enter("deleteSecret", request, ctx);
    return { deleted: false };
  }

  // Security: canned answers of the right shape (no real keys); test/security runs the real service.
  async whoAmI(request: api.WhoAmIRequest, ctx: CallContext): Promise<api.WhoAmIResponse> {
    this.enter("whoAmI", request, ctx);
    return { name: ctx.identity ?? "anonymous", role: "admin", via: "development", nodeId: "" };
  }
  private answer<T>(method: string, request: unknown, ctx: CallContext, response: T): T {
    this.enter(method, request, ctx);
    return response;
  }
  private static readonly PEM = "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n";
  private static readonly at = new Date("2026-01-01T00:00:00Z");
  private static issued() {
    return { certPem: FakePersysApi.PEM, keyPem: "", caPem: FakePersysApi.PEM, notAfter: FakePersysApi.at };
  }
  createApiToken = async (r: api.CreateApiTokenRequest, c: CallContext) =>
    this.answer("createApiToken", r, c, {
      token: "psy_aaaaaaaaaaaa_fake",
      apiToken: { id: "aaaaaaaaaaaa", name: r.name, role: r.role, createdAt: FakePersysApi.at },
    });
  listApiTokens = async (r: api.ListApiTokensRequest, c: CallContext) =>
    this.answer("listApiTokens", r, c, { tokens: [] });
  revokeApiToken = async (r: api.RevokeApiTokenRequest, c: CallContext) =>
    this.answer("revokeApiToken", r, c, { revoked: false });
  createJoinToken = async (r: api.CreateJoinTokenRequest, c: CallContext) =>
    this.answer("createJoinToken", r, c, {
      token: "abcdef.0123456789abcdef",
      joinToken: {
        id: "abcdef",
        description: r.description,
        createdAt: FakePersysApi.at,
        expiresAt: FakePersysApi.at,
        expired: false,
        used: false,
        usedBy: "",
      },
      caCertHash: `sha256:${"0".repeat(64)}`,
    });
  listJoinTokens = async (r: api.ListJoinTokensRequest, c: CallContext) =>
    this.answer("listJoinTokens", r, c, { tokens: [] });
  revokeJoinToken = async (r: api.RevokeJoinTokenRequest, c: CallContext) =>
    this.answer("revokeJoinToken", r, c, { revoked: false });
  getClusterCa = async (r: api.GetClusterCaRequest, c: CallContext) =>
    this.answer("getClusterCa", r, c, { caPem: FakePersysApi.PEM, caCertHash: `sha256:${"0".repeat(64)}` });
  joinNode = async (r: api.JoinNodeRequest, c: CallContext) => this.answer("joinNode", r, c, FakePersysApi.issued());
  renewNodeCertificate = async (r: api.RenewNodeCertificateRequest, c: CallContext) =>
    this.answer("renewNodeCertificate", r, c, FakePersysApi.issued());
  issueUserCertificate = async (r: api.IssueUserCertificateRequest, c: CallContext) =>
    this.answer("issueUserCertificate", r, c, FakePersysApi.issued());
}

/** A workload as a user would write it. */
export function sampleWorkload(id = "web"): api.Workload {
  return api.Workload.fromPartial({
    id,
    kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
    replicas: 2,
    resources: { cpuMillicores: 500, memoryMib: 256 },
    labels: { "app.kubernetes.io/name": "web", tier: "front" },
    spec: {
      $case: "container",
      value: api.ContainerSpec.fromPartial({
        image: "nginx:1.27",
        env: { LOG_LEVEL: "debug" },
        ports: [{ containerPort: 80, hostPort: 8080, protocol: api.Protocol.PROTOCOL_TCP }],
      }),
    },
  });
}

export function sampleNode(id = "node-1"): api.Node {
  return api.Node.fromPartial({
    id,
    labels: { zone: "a" },
    state: api.NodeState.NODE_STATE_READY,
    capacity: { cpuMillicores: 4000, memoryMib: 8192, diskGib: 100 },
    capabilities: ["docker", "kvm"],
    supportedKinds: [api.WorkloadKind.WORKLOAD_KIND_CONTAINER, api.WorkloadKind.WORKLOAD_KIND_VM],
    lastHeartbeatAt: new Date("2025-01-02T03:04:05.000Z"),
  });
}

/** Mutable health for the probes. */
export class FakeHealth {
  isLive = true;
  readiness: { ready: boolean; reason?: string; details?: Record<string, string> } = { ready: true };
  live(): boolean {
    return this.isLive;
  }
  ready() {
    return this.readiness;
  }
}
