// The /v1 REST routes over the fake core: what each route passes to PersysApi, and what it answers.
import { api, PersysError } from "@persys/schema";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildRestServer, v1Routes } from "../../controlplane/src/api/rest/index.js";
import { FakeHealth, FakePersysApi, sampleNode, sampleWorkload } from "./support/fake-persys-api.js";

let app: FastifyInstance;
let core: FakePersysApi;

beforeAll(async () => {
  core = new FakePersysApi();
  app = buildRestServer({ api: core, health: new FakeHealth() });
  await app.ready();
});
afterAll(() => app.close());

beforeEach(() => {
  core.calls.length = 0;
  core.workloads.clear();
  core.nodes.clear();
  core.events.length = 0;
  core.workloads.set("web", sampleWorkload("web"));
  core.nodes.set("node-1", sampleNode("node-1"));
  core.events.push(
    api.Event.fromPartial({
      id: "e1",
      type: "workload.applied",
      workloadId: "web",
      time: new Date("2025-01-01T00:00:00Z"),
    }),
    api.Event.fromPartial({
      id: "e2",
      type: "replica.placed",
      workloadId: "db",
      time: new Date("2025-01-03T00:00:00Z"),
    }),
  );
});

const workloadJson = api.Workload.toJSON(sampleWorkload("api")) as Record<string, unknown>;

interface Case {
  readonly name: string;
  readonly method: "GET" | "PUT" | "POST" | "DELETE";
  readonly url: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** The PersysApi method and the request it must receive. */
  readonly rpc: string;
  readonly request: unknown;
  readonly status?: number;
}

const cases: readonly Case[] = [
  {
    name: "apply creates (201) from the workload body and the path id",
    method: "PUT",
    url: "/v1/workloads/api",
    body: { ...workloadJson, id: undefined },
    rpc: "applyWorkload",
    request: { workload: sampleWorkload("api") },
    status: 201,
  },
  {
    name: "apply with If-Match passes the expected revision",
    method: "PUT",
    url: "/v1/workloads/web",
    body: api.Workload.toJSON(sampleWorkload("web")),
    headers: { "if-match": '"rev-1"' },
    rpc: "applyWorkload",
    request: { workload: sampleWorkload("web"), expectedRevision: "rev-1" },
    status: 409,
  },
  {
    name: "apply with If-None-Match: * creates only",
    method: "PUT",
    url: "/v1/workloads/web",
    body: api.Workload.toJSON(sampleWorkload("web")),
    headers: { "if-none-match": "*" },
    rpc: "applyWorkload",
    request: { workload: sampleWorkload("web"), expectedRevision: "" },
    status: 409,
  },
  {
    name: "apply many passes every workload",
    method: "POST",
    url: "/v1/workloads",
    body: { workloads: [api.Workload.toJSON(sampleWorkload("api")), api.Workload.toJSON(sampleWorkload("db"))] },
    rpc: "applyWorkloads",
    request: { workloads: [sampleWorkload("api"), sampleWorkload("db")] },
  },
  {
    name: "get with a view",
    method: "GET",
    url: "/v1/workloads/web?view=WORKLOAD_VIEW_BASIC",
    rpc: "getWorkload",
    request: { workloadId: "web", view: api.WorkloadView.WORKLOAD_VIEW_BASIC },
  },
  {
    name: "list with filters and paging",
    method: "GET",
    url: "/v1/workloads?kind=WORKLOAD_KIND_CONTAINER&state=WORKLOAD_STATE_RUNNING&nodeId=node-1&labelSelector=tier%3Dfront&pageSize=25&pageToken=abc",
    rpc: "listWorkloads",
    request: api.ListWorkloadsRequest.fromPartial({
      kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
      state: api.WorkloadState.WORKLOAD_STATE_RUNNING,
      nodeId: "node-1",
      labelSelector: "tier=front",
      pageSize: 25,
      pageToken: "abc",
    }),
  },
  {
    name: "delete with allowMissing",
    method: "DELETE",
    url: "/v1/workloads/gone?allowMissing=true",
    rpc: "deleteWorkload",
    request: { workloadId: "gone", allowMissing: true },
  },
  {
    name: "start",
    method: "POST",
    url: "/v1/workloads/web/start",
    rpc: "startWorkload",
    request: { workloadId: "web" },
  },
  {
    name: "stop (empty JSON body)",
    method: "POST",
    url: "/v1/workloads/web/stop",
    body: {},
    rpc: "stopWorkload",
    request: { workloadId: "web" },
  },
  {
    name: "restart one replica",
    method: "POST",
    url: "/v1/workloads/web/restart",
    body: { replicaIndex: 1 },
    rpc: "restartWorkload",
    request: { workloadId: "web", replicaIndex: 1, mode: api.RestartMode.RESTART_MODE_UNSPECIFIED },
  },
  {
    name: "reboot in place",
    method: "POST",
    url: "/v1/workloads/web/restart",
    body: { mode: "RESTART_MODE_REBOOT" },
    rpc: "restartWorkload",
    request: { workloadId: "web", mode: api.RestartMode.RESTART_MODE_REBOOT },
  },
  {
    name: "retry replica 0 (0 is not unset)",
    method: "POST",
    url: "/v1/workloads/web/retry",
    body: { replicaIndex: 0 },
    rpc: "retryWorkload",
    request: { workloadId: "web", replicaIndex: 0 },
  },
  {
    name: "move one replica (index from the path)",
    method: "POST",
    url: "/v1/workloads/web/replicas/1/move",
    body: { fromNode: "n1", reason: "rebalance" },
    rpc: "moveReplica",
    request: { workloadId: "web", replicaIndex: 1, fromNode: "n1", toNode: "", reason: "rebalance" },
  },
  {
    name: "explain",
    method: "GET",
    url: "/v1/workloads/web/explain",
    rpc: "explainWorkload",
    request: { workloadId: "web" },
  },
  {
    name: "plan",
    method: "POST",
    url: "/v1/plan",
    body: { workload: workloadJson },
    rpc: "planWorkload",
    request: { workload: sampleWorkload("api") },
  },
  {
    name: "events of one workload",
    method: "GET",
    url: "/v1/workloads/web/events?types=workload.applied&since=2024-12-31T00:00:00Z",
    rpc: "listEvents",
    request: api.ListEventsRequest.fromPartial({
      filter: { workloadId: "web", types: ["workload.applied"] },
      since: new Date("2024-12-31T00:00:00Z"),
    }),
  },
  {
    name: "list nodes",
    method: "GET",
    url: "/v1/nodes?state=NODE_STATE_READY&capability=kvm&pageSize=5",
    rpc: "listNodes",
    request: api.ListNodesRequest.fromPartial({
      state: api.NodeState.NODE_STATE_READY,
      capability: "kvm",
      pageSize: 5,
    }),
  },
  { name: "get node", method: "GET", url: "/v1/nodes/node-1", rpc: "getNode", request: { nodeId: "node-1" } },
  {
    name: "cordon with a reason",
    method: "POST",
    url: "/v1/nodes/node-1/cordon",
    body: { reason: "disk replacement" },
    rpc: "cordonNode",
    request: { nodeId: "node-1", reason: "disk replacement" },
  },
  {
    name: "uncordon",
    method: "POST",
    url: "/v1/nodes/node-1/uncordon",
    rpc: "uncordonNode",
    request: { nodeId: "node-1" },
  },
  {
    name: "drain dry run",
    method: "POST",
    url: "/v1/nodes/node-1/drain",
    body: { dryRun: true },
    rpc: "drainNode",
    request: { nodeId: "node-1", reason: "", dryRun: true },
  },
  { name: "cluster summary", method: "GET", url: "/v1/cluster/summary", rpc: "getClusterSummary", request: {} },
  {
    name: "list events with repeated types and a severity",
    method: "GET",
    url: "/v1/events?types=a&types=b&minSeverity=EVENT_SEVERITY_WARNING&nodeId=node-1&pageSize=10",
    rpc: "listEvents",
    request: api.ListEventsRequest.fromPartial({
      filter: { nodeId: "node-1", types: ["a", "b"], minSeverity: api.EventSeverity.EVENT_SEVERITY_WARNING },
      pageSize: 10,
    }),
  },
  {
    name: "diagnose a workload over a window",
    method: "GET",
    url: "/v1/workloads/api/diagnosis?windowSeconds=600",
    rpc: "diagnoseWorkload",
    request: { workloadId: "api", windowSeconds: 600 },
    status: 404,
  },
  {
    name: "forecast one node with a method",
    method: "GET",
    url: "/v1/forecast?nodeId=node-1&windowSeconds=60&method=FORECAST_METHOD_HOLT",
    rpc: "getForecast",
    request: { nodeId: "node-1", windowSeconds: 60, method: api.ForecastMethod.FORECAST_METHOD_HOLT },
  },
  {
    name: "recommendations",
    method: "GET",
    url: "/v1/recommendations",
    rpc: "listRecommendations",
    request: { windowSeconds: 0 },
  },
  {
    name: "ask a question",
    method: "POST",
    url: "/v1/ask",
    body: { question: "why is web pending?" },
    rpc: "ask",
    request: { question: "why is web pending?" },
  },
  {
    name: "apply a policy from the body and the path id",
    method: "PUT",
    url: "/v1/policies/web-autoscale",
    body: { when: { cron: "*/5 * * * *" }, action: { restart: { workloadId: "web" } }, dryRun: true },
    rpc: "applyPolicy",
    request: {
      policy: api.Policy.fromJSON({
        id: "web-autoscale",
        when: { cron: "*/5 * * * *" },
        action: { restart: { workloadId: "web" } },
        dryRun: true,
      }),
    },
  },
  { name: "list policies", method: "GET", url: "/v1/policies", rpc: "listPolicies", request: {} },
  {
    name: "delete a policy, allowing a missing one",
    method: "DELETE",
    url: "/v1/policies/web-autoscale?allowMissing=true",
    rpc: "deletePolicy",
    request: { policyId: "web-autoscale", allowMissing: true },
  },
  {
    name: "audit records awaiting approval",
    method: "GET",
    url: "/v1/audit?policyId=p&awaitingApproval=true&limit=5",
    rpc: "listAuditRecords",
    request: { policyId: "p", awaitingApproval: true, limit: 5 },
  },
  {
    name: "reject an approval",
    method: "POST",
    url: "/v1/approvals/p-1",
    body: { reject: true },
    rpc: "approveAction",
    request: { approvalId: "p-1", reject: true },
    status: 404,
  },
  {
    name: "put a secret (text and base64 values)",
    method: "PUT",
    url: "/v1/secrets/db",
    body: { stringData: { password: "pw" }, data: { "ca.crt": Buffer.from("CA").toString("base64") } },
    rpc: "putSecret",
    request: { name: "db", stringData: { password: "pw" }, data: { "ca.crt": Buffer.from("CA") } },
  },
  { name: "list secrets", method: "GET", url: "/v1/secrets", rpc: "listSecrets", request: {} },
  {
    name: "get a secret",
    method: "GET",
    url: "/v1/secrets/db",
    rpc: "getSecret",
    request: { name: "db" },
    status: 404,
  },
  {
    name: "delete a secret, forced",
    method: "DELETE",
    url: "/v1/secrets/db?force=true",
    rpc: "deleteSecret",
    request: { name: "db", force: true },
  },
  { name: "who am I", method: "GET", url: "/v1/whoami", rpc: "whoAmI", request: {} },
  {
    name: "create an API token",
    method: "POST",
    url: "/v1/tokens",
    body: { name: "ci", role: "operator", ttlSeconds: "3600" },
    rpc: "createApiToken",
    request: { name: "ci", role: "operator", ttlSeconds: 3600 },
  },
  { name: "list API tokens", method: "GET", url: "/v1/tokens", rpc: "listApiTokens", request: {} },
  {
    name: "revoke an API token",
    method: "DELETE",
    url: "/v1/tokens/abc",
    rpc: "revokeApiToken",
    request: { id: "abc" },
  },
  {
    name: "create a join token",
    method: "POST",
    url: "/v1/join-tokens",
    body: { description: "rack 3" },
    rpc: "createJoinToken",
    request: { description: "rack 3", ttlSeconds: 0 },
  },
  { name: "list join tokens", method: "GET", url: "/v1/join-tokens", rpc: "listJoinTokens", request: {} },
  {
    name: "revoke a join token",
    method: "DELETE",
    url: "/v1/join-tokens/abcdef",
    rpc: "revokeJoinToken",
    request: { id: "abcdef" },
  },
  { name: "the cluster CA", method: "GET", url: "/v1/cluster/ca", rpc: "getClusterCa", request: {} },
  {
    name: "join a node",
    method: "POST",
    url: "/v1/nodes/n1/join",
    body: { joinToken: "abcdef.0123456789abcdef", hosts: ["10.0.0.5"] },
    rpc: "joinNode",
    request: { nodeId: "n1", joinToken: "abcdef.0123456789abcdef", csrPem: "", hosts: ["10.0.0.5"] },
  },
  {
    name: "renew a node certificate",
    method: "POST",
    url: "/v1/nodes/n1/certificate",
    rpc: "renewNodeCertificate",
    request: { nodeId: "n1", csrPem: "", hosts: [] },
  },
  {
    name: "issue a user certificate",
    method: "POST",
    url: "/v1/users/vera/certificate",
    body: { role: "viewer" },
    rpc: "issueUserCertificate",
    request: { name: "vera", role: "viewer", ttlSeconds: 0 },
  },
];

describe("every route passes the right request to the core", () => {
  it.each(cases)("$name", async ({ method, url, body, headers, rpc, request, status }) => {
    const response = await app.inject({
      method,
      url,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    expect(response.statusCode, response.body).toBe(status ?? 200);
    expect(core.lastCall(rpc)?.request).toEqual(request);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
  });

  it("covers every non-streaming route of the table", () => {
    const covered = new Set(cases.map((c) => c.rpc));
    const unary = v1Routes.filter((r) => !r.stream).map((r) => r.rpc);
    expect(unary.filter((rpc) => !covered.has(rpc))).toEqual([]);
  });
});

describe("responses are the proto3 JSON mapping", () => {
  it("returns the stored workload with its ETag, enums as names and timestamps as RFC 3339", async () => {
    const response = await app.inject({ method: "PUT", url: "/v1/workloads/api", payload: workloadJson });
    const body = response.json() as { workload: Record<string, unknown>; created: boolean };
    expect(body.created).toBe(true);
    expect(body.workload.kind).toBe("WORKLOAD_KIND_CONTAINER");
    expect(body.workload.labels).toEqual({ "app.kubernetes.io/name": "web", tier: "front" });
    expect(body.workload.status).toMatchObject({
      state: "WORKLOAD_STATE_PENDING",
      createdAt: "2025-01-02T03:04:05.000Z",
      generation: 1,
    });
    expect(response.headers.etag).toBe(`"${(body.workload.status as { revision: string }).revision}"`);
    const again = await app.inject({ method: "PUT", url: "/v1/workloads/api", payload: workloadJson });
    expect(again.statusCode).toBe(200);
    // proto3 JSON omits false: an unchanged re-apply says neither `changed` nor `created`.
    const unchanged = again.json() as Record<string, unknown>;
    expect([unchanged.changed, unchanged.created]).toEqual([undefined, undefined]);
    expect(api.ApplyWorkloadResponse.fromJSON(unchanged).changed).toBe(false);
  });

  it("answers an explanation with the diagnosis numbers", async () => {
    const response = await app.inject({ method: "GET", url: "/v1/workloads/web/explain" });
    expect(response.json()).toMatchObject({
      workloadId: "web",
      replicas: [
        {
          state: "REPLICA_STATE_PENDING",
          diagnosis: {
            nodesEvaluated: 12,
            exhaustion: [{ dimension: "RESOURCE_DIMENSION_MEMORY", needed: 2048, bestAvailable: 1536, unit: "MiB" }],
          },
        },
      ],
    });
  });

  it("sends the x-request-id it was given and passes it to the core", async () => {
    const response = await app.inject({
      method: "GET",
      url: "/v1/cluster/summary",
      headers: { "x-request-id": "req-7" },
    });
    expect(response.headers["x-request-id"]).toBe("req-7");
    expect(core.lastCall("getClusterSummary")?.ctx.requestId).toBe("req-7");
  });
});

describe("errors from the core", () => {
  it.each([
    { name: "NOT_FOUND", error: new PersysError("NOT_FOUND", "workload x not found"), status: 404 },
    { name: "CONFLICT", error: new PersysError("CONFLICT", "changed concurrently"), status: 409 },
    { name: "COMPACTED", error: new PersysError("COMPACTED", "compacted"), status: 410 },
    { name: "UNSCHEDULABLE", error: new PersysError("UNSCHEDULABLE", "0/3 nodes are available"), status: 422 },
    { name: "UNAVAILABLE", error: new PersysError("UNAVAILABLE", "not the leader"), status: 503 },
    {
      name: "INVALID_SPEC with details",
      error: new PersysError("INVALID_SPEC", "bad", {
        details: [{ path: "workload.container.ports[0].hostPort", reason: "must be 1..65535" }],
      }),
      status: 400,
    },
  ])("$name → $status with the error body", async ({ error, status }) => {
    core.failNext("getClusterSummary", error);
    const response = await app.inject({ method: "GET", url: "/v1/cluster/summary" });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toEqual(error.toBody());
  });

  it("hides an unexpected error's text behind INTERNAL", async () => {
    core.failNext("getClusterSummary", new TypeError("cannot read secretKey of undefined"));
    const response = await app.inject({ method: "GET", url: "/v1/cluster/summary" });
    expect(response.statusCode).toBe(500);
    const body = response.json() as { code: string; message: string };
    expect(body.code).toBe("INTERNAL");
    expect(body.message).not.toContain("secretKey");
    expect(body.message).toContain(response.headers["x-request-id"] as string);
  });
});
