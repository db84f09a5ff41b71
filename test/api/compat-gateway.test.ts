// The Go persys-gateway's HTTP/JSON routes, served over AgentControlApi, compared with the shapes the
// Go gateway writes (fixtures/go-gateway, written from wire-contract.md §5).
import { readFileSync } from "node:fs";
import { control } from "@persys/schema";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildRestServer } from "../../controlplane/src/api/rest/index.js";
import { FakeAgentControl } from "./support/fake-agent-control.js";
import { FakeHealth, FakePersysApi } from "./support/fake-persys-api.js";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`fixtures/go-gateway/${name}`, import.meta.url), "utf8"));
const recorded: Record<string, unknown> = fixture("responses.json");

let app: FastifyInstance;
let core: FakeAgentControl;

beforeAll(async () => {
  core = new FakeAgentControl();
  app = buildRestServer({
    api: new FakePersysApi(),
    agentControl: core,
    health: new FakeHealth(),
    clusterIds: ["prod"],
  });
  await app.ready();
});
afterAll(() => app.close());

const expectedApply = control.ApplyWorkloadRequest.fromPartial({
  workloadId: "web",
  spec: {
    type: "container",
    resources: { cpuMillicores: 500, memoryMb: 256, diskGb: 1 },
    workload: {
      $case: "container",
      value: {
        image: "nginx:1.27",
        command: ["nginx", "-g", "daemon off;"],
        env: { LOG_LEVEL: "debug", api_key_ref: "vault:kv/web" },
        ports: [{ hostPort: 8080, containerPort: 80, protocol: "tcp" }],
        volumes: [{ hostPath: "/srv/web", containerPath: "/usr/share/nginx/html", readOnly: true }],
        restartPolicy: "always",
      },
    },
    metadata: { team: "infra", cost_center: "42" },
  },
  revisionId: "r1",
  desiredState: "Running",
});

describe("compat routes answer what the Go gateway answers", () => {
  const reads = [
    { name: "list workloads", method: "GET", url: "/workloads", recorded: "GET /workloads" },
    { name: "list (alias)", method: "GET", url: "/list", recorded: "GET /workloads" },
    { name: "get workload", method: "GET", url: "/workloads/db", recorded: "GET /workloads/db" },
    { name: "list nodes", method: "GET", url: "/nodes", recorded: "GET /nodes" },
    { name: "get node (map keys kept)", method: "GET", url: "/nodes/node-1", recorded: "GET /nodes/node-1" },
    { name: "cluster metrics", method: "GET", url: "/cluster/metrics", recorded: "GET /cluster/metrics" },
    { name: "delete", method: "DELETE", url: "/workloads/web", recorded: "DELETE /workloads/web" },
    { name: "retry", method: "POST", url: "/workloads/web/retry", recorded: "POST /workloads/web/retry" },
    { name: "cluster-scoped list", method: "GET", url: "/clusters/prod/workloads", recorded: "GET /workloads" },
    { name: "cluster-scoped node", method: "GET", url: "/clusters/prod/nodes/node-1", recorded: "GET /nodes/node-1" },
  ] as const;

  it.each(reads)("$name: $method $url", async ({ method, url, recorded: key }) => {
    const response = await app.inject({ method, url });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.json()).toEqual(recorded[key]);
  });

  it.each([
    { name: "snake_case body (persysctl)", file: "requests/schedule-snake.json" },
    { name: "lowerCamel body with unknown keys", file: "requests/schedule-camel.json" },
  ])("POST /workloads/schedule decodes a $name like protojson DiscardUnknown", async ({ file }) => {
    const response = await app.inject({ method: "POST", url: "/workloads/schedule", payload: fixture(file) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(recorded["POST /workloads/schedule"]);
    expect(core.lastRequest("applyWorkload")).toEqual(expectedApply);
  });

  it("reports an apply failure in the response body, as the Go scheduler does", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/workloads/schedule",
      payload: { workload_id: "bad-image", desired_state: "Running" },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(recorded["POST /workloads/schedule (bad-image)"]);
  });

  it("accepts a body sent without a JSON content type (the gateway reads any body as protojson)", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/workloads/schedule",
      headers: { "content-type": "text/plain" },
      payload: JSON.stringify({ workload_id: "web" }),
    });
    expect(response.statusCode).toBe(200);
  });
});

describe("compat query parameters", () => {
  it.each([
    { name: "status", url: "/workloads?status=failed", ids: ["db"] },
    { name: "node_id (ignored by the Go gateway, honoured here)", url: "/workloads?node_id=node-1", ids: ["web"] },
    { name: "both", url: "/list?status=running&node_id=node-2", ids: [] },
    { name: "unknown parameters are ignored", url: "/workloads?page=2&status=running", ids: ["web"] },
  ])("$name", async ({ url, ids }) => {
    const response = await app.inject({ method: "GET", url });
    expect(response.statusCode).toBe(200);
    const body = response.json() as { workloads?: { workload_id: string }[] };
    expect((body.workloads ?? []).map((w) => w.workload_id)).toEqual(ids);
  });

  it("forwards GET /nodes?status", async () => {
    const response = await app.inject({ method: "GET", url: "/nodes?status=notready" });
    expect((response.json() as { nodes: { node_id: string }[] }).nodes.map((n) => n.node_id)).toEqual(["node-2"]);
  });
});

describe("compat errors are {error} with a meaningful status", () => {
  it.each([
    { name: "malformed JSON", method: "POST", url: "/workloads/schedule", payload: "{nope", status: 400 },
    { name: "empty body", method: "POST", url: "/workloads/schedule", payload: "", status: 400 },
    { name: "a JSON array", method: "POST", url: "/workloads/schedule", payload: "[]", status: 400 },
    { name: "wrong type", method: "POST", url: "/workloads/schedule", payload: '{"workload_id": 7}', status: 400 },
    {
      name: "int32 out of range",
      method: "POST",
      url: "/workloads/schedule",
      payload: '{"spec":{"container":{"ports":[{"host_port":70000000000}]}}}',
      status: 400,
    },
    {
      name: "oneof set twice",
      method: "POST",
      url: "/workloads/schedule",
      payload: '{"spec":{"container":{},"vm":{}}}',
      status: 400,
    },
    {
      name: "a number for a string",
      method: "POST",
      url: "/workloads/schedule",
      payload: '{"revision_id": "r", "desired_state": 1}',
      status: 400,
    },
    { name: "a core INVALID_SPEC", method: "POST", url: "/workloads/schedule", payload: "{}", status: 400 },
    { name: "missing workload (500 in the Go gateway)", method: "GET", url: "/workloads/nope", status: 404 },
    { name: "missing node", method: "GET", url: "/nodes/nope", status: 404 },
    { name: "unknown cluster", method: "GET", url: "/clusters/staging/workloads", status: 400 },
    {
      name: "unknown cluster by header",
      method: "GET",
      url: "/nodes",
      headers: { "x-persys-cluster-id": "staging" },
      status: 400,
    },
    { name: "unknown cluster by query", method: "GET", url: "/cluster/metrics?cluster_id=staging", status: 400 },
  ] as const)("$name → $status", async ({ method, url, status, ...rest }) => {
    const response = await app.inject({
      method,
      url,
      headers: { "content-type": "application/json", ...("headers" in rest ? rest.headers : {}) },
      ...("payload" in rest ? { payload: rest.payload } : {}),
    });
    expect(response.statusCode).toBe(status);
    const body = response.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["error"]);
    expect(typeof body.error).toBe("string");
    expect(String(body.error).length).toBeGreaterThan(0);
  });

  it("names the field protojson would name", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/workloads/schedule",
      payload: { spec: { resources: { memory_mb: "lots" } } },
    });
    expect(response.json()).toEqual({ error: 'proto: invalid value for int64 field memory_mb: "lots"' });
  });
});
