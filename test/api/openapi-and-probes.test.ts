// The OpenAPI document generated from the route schemas, and the operational routes
// (/healthz, /readyz, /metrics with metrics the core registers in the same registry).

import type { FastifyInstance } from "fastify";
import { Counter, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiMetrics } from "../../controlplane/src/api/metrics.js";
import { buildRestServer, v1Routes } from "../../controlplane/src/api/rest/index.js";
import { FakeAgentControl } from "./support/fake-agent-control.js";
import { FakeHealth, FakePersysApi } from "./support/fake-persys-api.js";

interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string; required?: boolean; schema: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

let app: FastifyInstance;
let doc: OpenApi;
const health = new FakeHealth();
const registry = new Registry();
const metrics = new ApiMetrics(registry);

beforeAll(async () => {
  app = buildRestServer({ api: new FakePersysApi(), agentControl: new FakeAgentControl(), health, metrics });
  await app.ready();
  doc = (await app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as OpenApi;
});
afterAll(() => app.close());

const openApiPath = (url: string) => url.replace(/:(\w+)/g, "{$1}");

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document", () => {
    expect(doc.openapi).toBe("3.1.0");
  });

  it.each(v1Routes.map((r) => ({ name: `${r.method} ${r.url}`, route: r })))("documents $name", ({ route }) => {
    const operation = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
    expect(operation).toBeDefined();
    expect(operation!.operationId).toBe(route.operationId ?? route.rpc);
    const parameters = operation!.parameters ?? [];
    for (const name of Object.keys(route.params ?? {})) {
      expect(parameters).toContainEqual(expect.objectContaining({ in: "path", name, required: true }));
    }
    for (const name of Object.keys(route.query ?? {})) {
      expect(parameters).toContainEqual(expect.objectContaining({ in: "query", name }));
    }
    if (route.body) expect(operation!.requestBody?.content["application/json"]).toBeDefined();
    expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining(["200", "4XX", "5XX"]));
  });

  it("documents enums in query parameters by their value names", () => {
    const list = doc.paths["/v1/workloads"]!.get!;
    const kind = list.parameters!.find((p) => p.name === "kind")!;
    expect(kind.schema.enum).toEqual([
      "WORKLOAD_KIND_UNSPECIFIED",
      "WORKLOAD_KIND_CONTAINER",
      "WORKLOAD_KIND_COMPOSE",
      "WORKLOAD_KIND_VM",
    ]);
  });

  it("has unique operation ids", () => {
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("resolves every $ref to a component", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(50);
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.slice("#/components/schemas/".length)], ref).toBeDefined();
    }
  });

  it("carries the proto comments as descriptions", () => {
    const workload = doc.components.schemas["persys.api.v1.Workload"] as {
      description: string;
      properties: Record<string, { description?: string; readOnly?: boolean }>;
    };
    expect(workload.description).toContain("placed by the scheduler");
    expect(workload.properties.status?.readOnly).toBe(true);
  });

  it("documents the compat routes with their protojson (proto name) responses", () => {
    const node = doc.paths["/nodes/{id}"]!.get!;
    const schema = node.responses["200"]!.content!["application/json"]!.schema as { $ref: string };
    const component = doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")] as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(component.properties)).toEqual(["node"]);
  });
});

describe("probes", () => {
  it.each([
    { name: "live and ready", live: true, ready: { ready: true }, healthz: 200, readyz: 200, body: { ready: true } },
    {
      name: "live, not ready",
      live: true,
      ready: { ready: false, reason: "state store unreachable", details: { etcd: "connection refused" } },
      healthz: 200,
      readyz: 503,
      body: { ready: false, reason: "state store unreachable", details: { etcd: "connection refused" } },
    },
    {
      name: "not live",
      live: false,
      ready: { ready: false, reason: "stopping" },
      healthz: 503,
      readyz: 503,
      body: { ready: false, reason: "stopping" },
    },
  ])("$name", async ({ live, ready, healthz, readyz, body }) => {
    health.isLive = live;
    health.readiness = ready;
    const h = await app.inject({ method: "GET", url: "/healthz" });
    expect(h.statusCode).toBe(healthz);
    const r = await app.inject({ method: "GET", url: "/readyz" });
    expect(r.statusCode).toBe(readyz);
    expect(r.json()).toEqual(body);
  });
});

describe("GET /metrics", () => {
  it("serves request metrics by route template and the core's own metrics from the shared registry", async () => {
    const core = new Counter({ name: "persys_scheduler_decisions_total", help: "test", registers: [registry] });
    core.inc(3);
    await app.inject({ method: "GET", url: "/v1/workloads/nope" });
    await app.inject({ method: "GET", url: "/no/such/route/abc123" });
    const response = await app.inject({ method: "GET", url: "/metrics" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/plain/);
    expect(response.body).toContain("persys_scheduler_decisions_total 3");
    expect(response.body).toMatch(
      /persys_http_requests_total\{method="GET",route="\/v1\/workloads\/:workloadId",status="404"\} 1/,
    );
    expect(response.body).toMatch(/persys_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    expect(response.body).not.toContain("abc123");
  });
});
