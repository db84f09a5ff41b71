// Bad input to EVERY /v1 route is a typed 4xx with the one error body naming what is wrong, and never
// reaches the core: malformed JSON, wrong types, unknown fields, bad enum names, missing ids,
// oversized bodies, wrong content types, and (property-based) arbitrary bodies, queries and paths.
import { api } from "@persys/schema";
import fc from "fast-check";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildRestServer, type V1Route, v1Routes } from "../../controlplane/src/api/rest/index.js";
import { type JsonSchema, loadSchemaCatalog, referenceOf } from "../../controlplane/src/api/rest/json-schemas.js";
import { routeSchema } from "../../controlplane/src/api/rest/v1-route-schemas.js";
import { FakeHealth, FakePersysApi, sampleNode, sampleWorkload } from "./support/fake-persys-api.js";

const BODY_LIMIT = 64 * 1024;
const catalog = loadSchemaCatalog();
let app: FastifyInstance;
let core: FakePersysApi;

beforeAll(async () => {
  core = new FakePersysApi();
  app = buildRestServer({ api: core, health: new FakeHealth(), bodyLimit: BODY_LIMIT, streamFirstItemWaitMs: 20 });
  await app.ready();
});
afterAll(() => app.close());
beforeEach(() => {
  core.calls.length = 0;
  core.workloads.set("web", sampleWorkload("web"));
  core.nodes.set("node-1", sampleNode("node-1"));
});

const workloadJson = api.Workload.toJSON(sampleWorkload("web")) as Record<string, unknown>;
const ids: Record<string, string> = { workloadId: "web", nodeId: "node-1", replicaIndex: "0", name: "db" };

function urlOf(route: V1Route, fill: (name: string) => string = (name) => ids[name] ?? "x"): string {
  return route.url.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(fill(name)));
}

/** A request the route accepts (the baseline every bad variant departs from). */
/** Valid bodies of the routes whose body is not about a workload. */
const otherBodies: Partial<Record<V1Route["rpc"], unknown>> = {
  ask: { question: "why is web pending?" },
  applyPolicy: { id: "p", when: { cron: "* * * * *" }, action: { restart: { workloadId: "web" } } },
  putSecret: { stringData: { password: "s3cr3t" } },
  createApiToken: { name: "ci", role: "operator" },
  joinNode: { joinToken: "abcdef.0123456789abcdef" },
  issueUserCertificate: { role: "viewer" },
  moveReplica: {},
  applyWorkloads: { workloads: [workloadJson] },
};

function validBody(route: V1Route): unknown {
  if (route.rpc in otherBodies) return otherBodies[route.rpc];
  if (route.body?.kind === "field") return workloadJson;
  if (route.body?.kind === "rest" && route.body.required) return { workload: workloadJson };
  return undefined;
}

function bodyPrefix(route: V1Route): string {
  return route.body?.kind === "field" ? `${route.body.field}.` : "";
}

/** The properties a body may have, as the route declares them. */
function bodyProperties(route: V1Route): Record<string, JsonSchema> {
  const schema = routeSchema(catalog, route).body;
  if (!schema) return {};
  const ref = schema.$ref;
  const target = typeof ref === "string" ? catalog.schemas.get(ref.replace(/#$/, "")) : schema;
  return (target?.properties ?? {}) as Record<string, JsonSchema>;
}

/** A JSON value of the wrong type for a property schema. */
function wrongValue(schema: JsonSchema): unknown {
  const ref = referenceOf(schema);
  if (typeof ref === "string")
    return catalog.schemas.get(ref.replace(/#$/, ""))?.enum ? "NOT_A_VALUE" : "not an object";
  if (schema.enum) return "NOT_A_VALUE";
  if (schema.format === "date-time") return "yesterday";
  const type = schema.type;
  if (Array.isArray(type)) return true;
  switch (type) {
    case "string":
      return 5;
    case "integer":
    case "number":
      return "x";
    case "boolean":
      return "yes";
    case "array":
      return {};
    default:
      return [];
  }
}

/** A query value of the wrong type, or undefined when any string is fine. */
function wrongQueryValue(schema: JsonSchema): string | undefined {
  if (schema.enum) return "NOT_A_VALUE";
  if (schema.format === "date-time") return "yesterday";
  const type = schema.type;
  if (Array.isArray(type)) return "12x";
  if (type === "integer" || type === "number") return "abc";
  if (type === "boolean") return "maybe";
  return undefined;
}

interface ErrorBody {
  code: string;
  message: string;
  details: { path: string; reason: string }[];
  retryable: boolean;
}

function expectTypedClientError(response: LightMyRequestResponse, status = 400): ErrorBody {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json() as ErrorBody;
  expect(Object.keys(body).sort()).toEqual(["code", "details", "message", "retryable"]);
  expect(["INVALID_ARGUMENT", "INVALID_SPEC", "NOT_FOUND"]).toContain(body.code);
  expect(body.message.length).toBeGreaterThan(0);
  expect(core.calls).toEqual([]);
  return body;
}

const send = (
  route: V1Route,
  options: { url?: string; body?: unknown; raw?: string; headers?: Record<string, string> },
) =>
  app.inject({
    method: route.method,
    url: options.url ?? urlOf(route),
    headers: {
      ...(options.raw !== undefined || options.body !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    ...(options.raw !== undefined
      ? { payload: options.raw }
      : options.body !== undefined
        ? { payload: JSON.stringify(options.body) }
        : {}),
  });

const named = v1Routes.map((route) => ({ route, name: `${route.method} ${route.url}` }));
const withBody = named.filter(({ route }) => route.body);
const withQuery = named.filter(({ route }) => route.query);
const withParams = named.filter(({ route }) => route.params);

describe("query parameters", () => {
  it.each(named)("$name: an unknown parameter is a 400 naming it", async ({ route }) => {
    const body = expectTypedClientError(await send(route, { url: `${urlOf(route)}?bogus=1`, body: validBody(route) }));
    expect(body.details).toEqual([{ path: "bogus", reason: "unknown query parameter" }]);
  });

  const typedParams = withQuery.flatMap(({ route, name }) =>
    Object.entries((routeSchema(catalog, route).querystring?.properties ?? {}) as Record<string, JsonSchema>).flatMap(
      ([param, schema]) => {
        const bad = wrongQueryValue(schema);
        return bad === undefined ? [] : [{ route, name: `${name}?${param}=${bad}`, param, bad }];
      },
    ),
  );

  it("has typed parameters to check (enums, integers, booleans, timestamps)", () => {
    expect(typedParams.length).toBeGreaterThanOrEqual(20);
  });

  it.each(typedParams)("$name is a 400 naming the parameter", async ({ route, param, bad }) => {
    const response = await send(route, {
      url: `${urlOf(route)}?${param}=${encodeURIComponent(bad)}`,
      body: validBody(route),
    });
    expect(expectTypedClientError(response).details[0]?.path).toBe(param);
  });
});

describe("bodies", () => {
  it.each(withBody)("$name: malformed JSON is a 400", async ({ route }) => {
    const body = expectTypedClientError(await send(route, { raw: '{"id": "web",' }));
    expect(body.message).toBe("the body is not valid JSON");
  });

  it.each(withBody)("$name: a non-object body is a 400", async ({ route }) => {
    for (const raw of ["5", '"web"', "[]", "null", "true"]) {
      expectTypedClientError(await send(route, { raw }));
    }
  });

  it.each(withBody)("$name: an unknown field is a 400 naming it", async ({ route }) => {
    const base = (validBody(route) ?? {}) as Record<string, unknown>;
    const body = expectTypedClientError(await send(route, { body: { ...base, colour: "blue" } }));
    expect(body.details).toEqual([{ path: `${bodyPrefix(route)}colour`, reason: "unknown field" }]);
  });

  it.each(withBody.filter(({ route }) => Object.keys(bodyProperties(route)).length > 0))(
    "$name: every field refuses a value of the wrong type, naming it",
    async ({ route }) => {
      const properties = bodyProperties(route);
      for (const [name, schema] of Object.entries(properties)) {
        const base = (validBody(route) ?? {}) as Record<string, unknown>;
        const response = await send(route, { body: { ...base, [name]: wrongValue(schema) } });
        const error = expectTypedClientError(response);
        expect(error.details[0]?.path, name).toBe(`${bodyPrefix(route)}${name}`);
      }
    },
  );

  it.each(withBody)("$name: a body over the size limit is a 413", async ({ route }) => {
    const big = { ...((validBody(route) ?? {}) as object), padding: "x".repeat(BODY_LIMIT) };
    expectTypedClientError(await send(route, { body: big }), 413);
  });

  it.each(withBody)("$name: a body that is not JSON is a 415", async ({ route }) => {
    const response = await app.inject({
      method: route.method,
      url: urlOf(route),
      headers: { "content-type": "text/yaml" },
      payload: "id: web\n",
    });
    expectTypedClientError(response, 415);
  });

  it("names a nested field with its full request path", async () => {
    const route = v1Routes.find((r) => r.rpc === "applyWorkload")!;
    const cases = [
      {
        mutate: { container: { image: "nginx", ports: [{ containerPort: 80, hostPort: "8080" }] } },
        path: "workload.container.ports[0].hostPort",
      },
      {
        mutate: { container: { image: "nginx", ports: [{ protocol: "SCTP" }] } },
        path: "workload.container.ports[0].protocol",
      },
      { mutate: { labels: { tier: 5 } }, path: "workload.labels.tier" },
      {
        mutate: {
          placement: { requiredNodeAffinity: [{ key: "zone", operator: "LABEL_OPERATOR_IN", valuez: ["a"] }] },
        },
        path: "workload.placement.requiredNodeAffinity[0].valuez",
      },
      { mutate: { compose: { inlineYaml: "services: {}" } }, path: "workload.compose" },
      { mutate: { replicas: 3_000_000_000 }, path: "workload.replicas" },
      { mutate: { status: { generation: "12x" } }, path: "workload.status.generation" },
    ];
    for (const { mutate, path } of cases) {
      const body = expectTypedClientError(await send(route, { body: { ...workloadJson, ...mutate } }));
      expect(body.code).toBe("INVALID_SPEC");
      expect(body.details[0]?.path).toBe(path);
    }
  });

  it("refuses a body id that contradicts the URL", async () => {
    const route = v1Routes.find((r) => r.rpc === "applyWorkload")!;
    const body = expectTypedClientError(await send(route, { url: "/v1/workloads/other", body: workloadJson }));
    expect(body.details[0]?.path).toBe("workload.id");
  });

  it("refuses a Last-Event-ID that is not a store revision", async () => {
    const route = v1Routes.find((r) => r.rpc === "watchWorkloads")!;
    const body = expectTypedClientError(await send(route, { headers: { "last-event-id": "yesterday" } }));
    expect(body.details[0]?.path).toBe("Last-Event-ID");
  });
});

describe("missing ids", () => {
  it.each(withParams)("$name: an empty path parameter is a 4xx", async ({ route }) => {
    const response = await send(route, { url: urlOf(route, () => ""), body: validBody(route) });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
    expectTypedClientError(response, response.statusCode);
  });

  it("an unknown route is a 404 with the error body", async () => {
    const response = await app.inject({ method: "GET", url: "/v1/workloadz" });
    const body = expectTypedClientError(response, 404);
    expect(body.code).toBe("NOT_FOUND");
  });
});

describe("property-based: no input makes a 5xx", () => {
  // Streams that are accepted stay open (inject would wait forever); they are covered above and in rest-streams.
  const unaryRoutes = v1Routes.filter((r) => !r.stream);
  const json = fc.jsonValue({ maxDepth: 4 });
  const requestOf = fc.record({
    index: fc.nat({ max: unaryRoutes.length - 1 }),
    path: fc.string({ maxLength: 20 }),
    query: fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 12 }), { maxKeys: 3 }),
    body: fc.option(json, { nil: undefined }),
  });

  it("arbitrary paths, queries and bodies on every route answer a 2xx or a typed 4xx", async () => {
    await fc.assert(
      fc.asyncProperty(requestOf, async ({ index, path, query, body }) => {
        core.calls.length = 0;
        const route = unaryRoutes[index]!;
        const url = `${urlOf(route, () => path || "x")}?${new URLSearchParams(query).toString()}`;
        const response = await app.inject({
          method: route.method,
          url,
          ...(body === undefined
            ? {}
            : { headers: { "content-type": "application/json" }, payload: JSON.stringify(body) }),
        });
        expect(response.statusCode, `${route.method} ${url} ${JSON.stringify(body)} → ${response.body}`).toBeLessThan(
          500,
        );
        if (response.statusCode >= 400) {
          const error = response.json() as ErrorBody;
          expect(typeof error.code).toBe("string");
          expect(Array.isArray(error.details)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a workload with any one value replaced is accepted or refused naming a field under workload", async () => {
    const route = v1Routes.find((r) => r.rpc === "applyWorkload")!;
    const paths = leafPaths(workloadJson);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), json, async (path, value) => {
        core.calls.length = 0;
        const body = structuredClone(workloadJson);
        setAt(body, path, value);
        const response = await send(route, { body });
        expect(response.statusCode, response.body).toBeLessThan(500);
        if (response.statusCode === 400) {
          const error = response.json() as ErrorBody;
          expect(error.details[0]?.path).toMatch(/^workload(\.|$)/);
          expect(core.calls).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

function leafPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return [prefix, ...value.flatMap((v, i) => leafPaths(v, [...prefix, i]))];
  if (typeof value === "object" && value !== null) {
    return [prefix, ...Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...prefix, k]))];
  }
  return [prefix];
}

function setAt(root: Record<string, unknown>, path: (string | number)[], value: unknown): void {
  if (path.length === 0) return;
  let node: Record<string | number, unknown> = root;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = value;
}

describe("forbidden keys", () => {
  it("drops a __proto__ key and names the field it was in, with a typed 400, not a 5xx", async () => {
    const route = v1Routes.find((r) => r.rpc === "applyWorkload")!;
    const response = await app.inject({
      method: route.method,
      url: urlOf(route),
      payload: '{"id":"web","kind":{"__proto__":""}}',
      headers: { "content-type": "application/json" },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      code: "INVALID_SPEC",
      details: [{ path: "workload.kind" }],
    });
  });
});
