/**
 * Malformed and nonsensical requests against the REAL control plane (not a fake core): whatever
 * passes the transport's schema checks reaches the services, which must answer with a typed 4xx and
 * the one error body — never a 5xx. Workload specs are mutated field by field with fast-check.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { v1Routes } from "../../controlplane/src/api/rest/index.js";
import { container, type Harness, startHarness, testConfig } from "./control-plane-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness(testConfig({}, "embedded"));
  await h.addNode({ id: "n1" });
  await h.rest("PUT", "/v1/workloads/web", container("web"));
});
afterAll(() => h.close());

const word = fc.oneof(fc.constantFrom("", "web", "Web", "-x", "a".repeat(70), "n1", "%20", "../x", "ünï"), fc.string());
const jsonValue = fc.oneof(
  fc.integer({ min: -5, max: 70_000 }),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);

function mutateSpec(path: readonly string[], value: unknown) {
  const spec: Record<string, any> = structuredClone(container("fuzz", { replicas: 1 }));
  let node = spec;
  for (const key of path.slice(0, -1)) {
    node[key] = typeof node[key] === "object" && node[key] !== null ? node[key] : {};
    node = node[key];
  }
  node[path.at(-1)!] = value;
  return spec;
}

const specPaths = fc.constantFrom(
  ["id"],
  ["replicas"],
  ["resources", "cpuMillicores"],
  ["resources", "memoryMib"],
  ["container", "image"],
  ["container", "ports"],
  ["container", "env"],
  ["container", "volumes"],
  ["placement", "nodeSelector"],
  ["placement", "spread"],
  ["placement", "requiredNodeAffinity"],
  ["labels"],
  ["kind"],
  ["updateStrategy", "maxUnavailable"],
);

describe("real core under bad input", () => {
  it("answers every mutated workload spec with 2xx or a typed 4xx, never 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(specPaths, jsonValue, async (path, value) => {
        const response = await h.rest("PUT", "/v1/workloads/fuzz", mutateSpec(path, value));
        expect(response.status, JSON.stringify({ path, value, body: response.body })).toBeLessThan(500);
        if (response.status >= 400) {
          expect(typeof response.body.code).toBe("string");
          expect(typeof response.body.message).toBe("string");
        }
      }),
      { numRuns: 150 },
    );
  });

  it("answers odd ids, queries and bodies on every non-streaming route with a typed status below 500", async () => {
    const routes = v1Routes.filter((r) => !r.stream);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        word,
        fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })),
        fc.option(jsonValue),
        async (route, id, query, body) => {
          const url = route.url.replace(/:(\w+)/g, () => encodeURIComponent(id));
          const qs = new URLSearchParams(query).toString();
          const response = await fetch(`${h.server.httpUrl}${url}${qs ? `?${qs}` : ""}`, {
            method: route.method,
            ...(body !== null && route.method !== "GET" && route.method !== "DELETE"
              ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
              : {}),
          });
          const text = await response.text();
          expect(response.status, `${route.method} ${url}?${qs} ${text}`).toBeLessThan(500);
        },
      ),
      { numRuns: 300 },
    );
  });
});
