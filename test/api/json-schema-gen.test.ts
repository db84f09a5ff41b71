// The generated JSON Schemas (schema/scripts/gen-json-schema.mjs → schema/src/gen/json-schema):
// deterministic, committed without drift, one per message, and true to what ts-proto's toJSON writes.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, control } from "@persys/schema";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonSchemaDir, schemaPackageDir } from "../../controlplane/src/api/grpc/schema-package.js";
import { loadSchemaCatalog } from "../../controlplane/src/api/rest/json-schemas.js";
import { FakePersysApi, sampleNode, sampleWorkload } from "./support/fake-persys-api.js";

const script = join(schemaPackageDir(), "scripts", "gen-json-schema.mjs");
const scratch = mkdtempSync(join(tmpdir(), "persys-json-schema-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function generate(dir: string): Map<string, string> {
  const result = spawnSync(process.execPath, [script, "--out", dir], { encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return new Map(
    readdirSync(dir)
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), "utf8")]),
  );
}

describe("generation", () => {
  it("is deterministic and matches the committed output", () => {
    const first = generate(join(scratch, "a"));
    const second = generate(join(scratch, "b"));
    expect([...second.entries()]).toEqual([...first.entries()]);
    const committed = new Map(
      readdirSync(jsonSchemaDir())
        .sort()
        .map((f) => [f, readFileSync(join(jsonSchemaDir(), f), "utf8")]),
    );
    expect([...committed.keys()]).toEqual([...first.keys()]);
    for (const [file, text] of first) expect(committed.get(file), `${file} drifted: run npm run gen`).toBe(text);
  }, 60_000);

  it.each([
    { pkg: "persys.api.v1", ns: api as unknown as Record<string, unknown> },
    { pkg: "persys.control.v1", ns: control as unknown as Record<string, unknown> },
  ])("has a schema for every message of $pkg", ({ pkg, ns }) => {
    const catalog = loadSchemaCatalog();
    const messages = Object.entries(ns)
      .filter(
        ([name, value]) =>
          /^[A-Z]/.test(name) &&
          typeof (value as { encode?: unknown })?.encode === "function" &&
          !name.endsWith("Client") &&
          !name.includes("_"),
      )
      .map(([name]) => name)
      .sort();
    expect(messages.length).toBeGreaterThan(20);
    for (const name of messages) {
      expect(catalog.schemas.has(`${pkg}.${name}.json`), name).toBe(true);
      expect(catalog.messages[`${pkg}.${name}`], name).toBeDefined();
    }
  });
});

describe("schemas accept what toJSON writes", () => {
  let app: FastifyInstance;
  const catalog = loadSchemaCatalog();

  beforeAll(async () => {
    app = Fastify({ ajv: { customOptions: { coerceTypes: false, allowUnionTypes: true, removeAdditional: false } } });
    for (const schema of catalog.schemas.values()) app.addSchema(schema);
    for (const id of catalog.schemas.keys()) {
      app.post(`/${id}`, { schema: { body: { $ref: `${id}#` } } }, async () => ({ ok: true }));
    }
    await app.ready();
  });
  afterAll(() => app.close());

  const core = new FakePersysApi();
  core.workloads.set("web", sampleWorkload());
  const ctx = { signal: new AbortController().signal };

  const samples: [string, () => Promise<unknown>][] = [
    ["persys.api.v1.Workload", async () => api.Workload.toJSON(sampleWorkload())],
    ["persys.api.v1.Node", async () => api.Node.toJSON(sampleNode())],
    [
      "persys.api.v1.ApplyWorkloadResponse",
      async () => api.ApplyWorkloadResponse.toJSON(await core.applyWorkload({ workload: sampleWorkload("x") }, ctx)),
    ],
    [
      "persys.api.v1.ExplainWorkloadResponse",
      async () => api.ExplainWorkloadResponse.toJSON(await core.explainWorkload({ workloadId: "web" }, ctx)),
    ],
    [
      "persys.api.v1.GetClusterSummaryResponse",
      async () => api.GetClusterSummaryResponse.toJSON(await core.getClusterSummary({}, ctx)),
    ],
    [
      "persys.api.v1.WatchWorkloadsResponse",
      async () => ({
        ...(api.WatchWorkloadsResponse.toJSON({ type: 1, workload: sampleWorkload(), storeRevision: 9 }) as object),
        storeRevision: "9",
      }),
    ],
    [
      "persys.api.v1.Error",
      async () => ({
        code: "INVALID_SPEC",
        message: "m",
        details: [{ path: "workload.id", reason: "r" }],
        retryable: false,
      }),
    ],
  ];

  it.each(samples)("%s", async (id, make) => {
    const response = await app.inject({ method: "POST", url: `/${id}.json`, payload: (await make()) as object });
    expect(response.statusCode, response.body).toBe(200);
  });

  it.each([
    ["an unknown field", "persys.api.v1.Resources", { cpuMillicores: 1, gpus: 2 }],
    ["two oneof members", "persys.api.v1.Workload", { container: {}, vm: {} }],
    ["an int32 out of range", "persys.api.v1.Resources", { memoryMib: 2 ** 31 }],
    ["an int64 that is not a number", "persys.api.v1.WorkloadStatus", { generation: "1e3" }],
    ["an enum number (names only)", "persys.api.v1.Workload", { kind: 1 }],
    ["a bad timestamp", "persys.api.v1.Event", { time: "2025-13-01" }],
  ])("refuses %s", async (_name, id, body) => {
    const response = await app.inject({ method: "POST", url: `/${id}.json`, payload: body });
    expect(response.statusCode).toBe(400);
  });
});
