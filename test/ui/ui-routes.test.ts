/**
 * The console's static routes (controlplane/src/api/rest/ui-routes.ts): content types, cache
 * headers, SPA fallback, 404 for missing assets, no escape from the dist folder, and a clear 503
 * when the bundle is not built.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerUiRoutes } from "../../controlplane/src/api/rest/ui-routes.js";
import { parseBanner } from "./support/persys-up.js";

let app: FastifyInstance;
let missing: FastifyInstance;

beforeAll(async () => {
  const dist = mkdtempSync(join(tmpdir(), "persys-ui-dist-"));
  mkdirSync(join(dist, "assets"));
  writeFileSync(join(dist, "index.html"), "<!doctype html><title>console</title>");
  writeFileSync(join(dist, "assets", "index-abc123.js"), "console.log(1)");
  writeFileSync(join(dist, "assets", "index-abc123.css"), "body{}");
  writeFileSync(join(tmpdir(), "persys-ui-secret.txt"), "TOP-SECRET-CONTENT");
  app = Fastify();
  await app.register(registerUiRoutes, { distDir: dist });
  missing = Fastify();
  await missing.register(registerUiRoutes, { distDir: join(dist, "nothing-here") });
});

afterAll(async () => {
  await app.close();
  await missing.close();
});

describe("/ui routes", () => {
  const cases: { name: string; url: string; status: number; type?: RegExp; cache?: RegExp; body?: RegExp }[] = [
    { name: "index", url: "/ui/", status: 200, type: /^text\/html/, cache: /no-cache/, body: /console/ },
    {
      name: "script asset, immutable",
      url: "/ui/assets/index-abc123.js",
      status: 200,
      type: /^text\/javascript/,
      cache: /immutable/,
    },
    {
      name: "style asset",
      url: "/ui/assets/index-abc123.css",
      status: 200,
      type: /^text\/css/,
      cache: /max-age=31536000/,
    },
    {
      name: "a console route falls back to index.html",
      url: "/ui/workloads/web",
      status: 200,
      type: /^text\/html/,
      body: /console/,
    },
    { name: "a console route with a query", url: "/ui/plan?from=web", status: 200, type: /^text\/html/ },
    { name: "a missing asset is 404, not the page", url: "/ui/assets/index-old.js", status: 404 },
    { name: "no way out of dist", url: "/ui/..%2F..%2Fpersys-ui-secret.txt", status: 404 },
    { name: "no way out of dist (dots)", url: "/ui/assets/../../persys-ui-secret.txt", status: 404 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const r = await app.inject({ method: "GET", url: c.url });
      expect(r.statusCode).toBe(c.status);
      if (c.type) expect(r.headers["content-type"]).toMatch(c.type);
      if (c.cache) expect(r.headers["cache-control"]).toMatch(c.cache);
      if (c.body) expect(r.body).toMatch(c.body);
      expect(r.body).not.toContain("TOP-SECRET-CONTENT");
    });
  }

  it("/ui redirects to /ui/", async () => {
    const r = await app.inject({ method: "GET", url: "/ui" });
    expect(r.statusCode).toBe(302);
    expect(r.headers.location).toBe("/ui/");
  });

  it("answers 503 with how to build it when the bundle is missing", async () => {
    for (const url of ["/ui/", "/ui/workloads"]) {
      const r = await missing.inject({ method: "GET", url });
      expect(r.statusCode).toBe(503);
      expect(r.headers["content-type"]).toMatch(/^text\/plain/);
      expect(r.body).toMatch(/web console is not built.*npm run build/);
    }
  });
});

describe("parseBanner", () => {
  it("reads the REST URL and the token line", () => {
    const banner = [
      "Persys single-node cluster is up.",
      "  gRPC API:  127.0.0.1:7070",
      "  REST API:  https://127.0.0.1:7080/v1   (OpenAPI: https://127.0.0.1:7080/v1/openapi.json)",
      "  token:     pst_abc.DEF-123",
    ].join("\n");
    expect(parseBanner(banner)).toEqual({ url: "https://127.0.0.1:7080", token: "pst_abc.DEF-123" });
    expect(parseBanner("  REST API:  http://127.0.0.1:1/v1   (OpenAPI: ...)")).toEqual({ url: "http://127.0.0.1:1" });
  });
});
