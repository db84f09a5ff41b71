import { randomUUID } from "node:crypto";
import type { ServerOptions as HttpsOptions } from "node:https";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { ApiMetrics } from "../metrics.js";
import type { AgentControlApi, PersysApi, ServerHealth } from "../persys-api.js";
import { compatSchemas, registerCompatRoutes } from "./compat/compat-routes.js";
import { loadSchemaCatalog } from "./json-schemas.js";
import { registerProbeRoutes } from "./probe-routes.js";
import { type RestIdentify, requestCredentials } from "./rest-context.js";
import { installErrorHandlers, streamErrorBody } from "./rest-errors.js";
import { registerUiRoutes } from "./ui-routes.js";
import type { V1RouteConfig } from "./v1-routes.js";
import { registerV1Routes } from "./v1-routes.js";

export interface RestServerOptions {
  /** Serves `/v1/...`. */
  readonly api: PersysApi;
  /** Serves the Go gateway's compat routes (`/workloads/schedule`, ...) when given. */
  readonly agentControl?: AgentControlApi;
  readonly health: ServerHealth;
  /** Shared metrics registry (`/metrics` serves all of it). Default: a fresh one. */
  readonly metrics?: ApiMetrics;
  /** Request and error logging. Default: none. */
  readonly logger?: Logger;
  /** Largest accepted request body in bytes; larger is 413. Default 1 MiB. */
  readonly bodyLimit?: number;
  /** Interval of SSE heartbeat comments (ms). Default 15000. */
  readonly sseHeartbeatMs?: number;
  /** How long a stream may take to yield (or fail) before its 200 headers go out (ms). Default 100. */
  readonly streamFirstItemWaitMs?: number;
  /** Caller credentials for CallContext.credentials. Default: verified client certificate subject and bearer token. */
  readonly identify?: RestIdentify;
  /** Serve HTTPS with these options (certificates, `requestCert` for mTLS). */
  readonly https?: HttpsOptions;
  /** Compat routes: cluster ids accepted in `/clusters/:cluster_id/...`. Default: any. */
  readonly clusterIds?: readonly string[];
  /** Version shown in the OpenAPI document. */
  readonly version?: string;
  /** Folder of the built web console served at `/ui`. Default: the dist of @persys/ui (503 when not built). */
  readonly uiDistDir?: string;
}

/**
 * The control plane's REST server (not yet listening): `/v1` routes over PersysApi with JSON Schema
 * validation from the generated message schemas, the OpenAPI 3.1 document at `GET /v1/openapi.json`,
 * the Go gateway's compat routes over AgentControlApi, `/healthz`, `/readyz` and `/metrics`.
 *
 * Call `listen` (or use `startRestServer`), or `inject` in tests. Bad input never reaches the core and
 * never yields a 5xx: every failure has the one error body (the compat routes: `{"error": "..."}`).
 */
export function buildRestServer(options: RestServerOptions): FastifyInstance {
  const catalog = loadSchemaCatalog();
  const metrics = options.metrics ?? new ApiMetrics();
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    ...(options.https ? { https: options.https } : {}),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // The client's x-request-id when it is safe to log, else a fresh UUID.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    exposeHeadRoutes: false,
    ajv: {
      customOptions: {
        // Bodies are proto3 JSON: no coercion ("5" is not a number), unknown fields are errors, nothing
        // is filled in. Query strings are coerced by the routes themselves (query-coercion.ts).
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        allowUnionTypes: true,
        allErrors: false,
        verbose: true,
      },
    },
  }) as unknown as FastifyInstance;

  app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Persys Compute API",
        version: options.version ?? "v1",
        description: "The public API (persys.api.v1) in the proto3 JSON mapping. Errors: persys.api.v1.Error.",
      },
      tags: [
        { name: "workloads" },
        { name: "nodes" },
        { name: "cluster" },
        { name: "events" },
        { name: "intelligence", description: "Explanations, forecasts and recommendations (reads only)." },
        { name: "automation", description: "Policies acted out through this API by the leader, with an audit trail." },
        { name: "secrets", description: "Secrets referenced by workloads: write-only values, metadata reads." },
        { name: "security", description: "Who am I, API tokens, join tokens, node and user certificates." },
        { name: "operations" },
        { name: "compat", description: "Routes of the Go persys-gateway (protojson, proto field names)." },
      ],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => componentName(json, i) },
  });
  for (const schema of catalog.schemas.values()) app.addSchema(schema);
  if (options.agentControl) for (const schema of compatSchemas(catalog)) app.addSchema(schema);
  // Responses are ts-proto toJSON output already; the response schemas document them (OpenAPI).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installJsonParser(app);
  installErrorHandlers(app);
  installRequestHooks(app, metrics);
  const shutdown = new AbortController();
  app.addHook("preClose", async () => shutdown.abort());
  app.register(async (scope) => {
    registerV1Routes(scope, {
      api: options.api,
      catalog,
      identify: options.identify ?? requestCredentials,
      errorBody: streamErrorBody,
      heartbeatMs: options.sseHeartbeatMs ?? 15_000,
      firstItemWaitMs: options.streamFirstItemWaitMs ?? 100,
      shutdown: shutdown.signal,
    });
    registerProbeRoutes(scope, options.health, metrics);
    await scope.register(registerUiRoutes, options.uiDistDir ? { distDir: options.uiDistDir } : {});
    scope.get("/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());
    if (options.agentControl) {
      await scope.register(registerCompatRoutes, {
        agentControl: options.agentControl,
        catalog,
        identify: options.identify ?? requestCredentials,
        ...(options.clusterIds ? { clusterIds: options.clusterIds } : {}),
      });
    }
  });
  return app;
}

/** A listening REST server. */
export interface RunningRestServer {
  readonly app: FastifyInstance;
  readonly port: number;
  /** `http(s)://host:port` */
  readonly url: string;
  /** Stops accepting connections, ends open streams gracefully and waits for requests in flight. Idempotent. */
  close(): Promise<void>;
}

/**
 * Builds the REST server and listens on `host:port` (port 0: a free port; default 127.0.0.1:0).
 *
 * @throws Error when the address cannot be bound.
 */
export async function startRestServer(
  options: RestServerOptions & { readonly host?: string; readonly port?: number },
): Promise<RunningRestServer> {
  const app = buildRestServer(options);
  const host = options.host ?? "127.0.0.1";
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const scheme = options.https ? "https" : "http";
  let closing: Promise<void> | undefined;
  return {
    app,
    port,
    url: `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () => {
      closing ??= closeServer(app);
      return closing;
    },
  };
}

async function closeServer(app: FastifyInstance): Promise<void> {
  // preClose ends open streams (their contexts abort); idle keep-alive connections are then closed.
  await app.close();
}

function componentName(json: { $id?: unknown }, i: number): string {
  return typeof json.$id === "string" ? json.$id.replace(/\.json$/, "") : `def-${i}`;
}

/**
 * JSON bodies: Fastify's secure parser, except that an empty body on a route whose body is optional
 * (the POST actions) is simply absent, whatever the Content-Type says. `__proto__` and
 * `constructor.prototype` keys are dropped while parsing (never a field of ours), so the rest of the
 * body is validated and the error names the field that held them.
 */
function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("remove", "remove");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const config = (request.routeOptions.config ?? {}) as V1RouteConfig;
    if (body === "" && config.optionalBody) {
      done(null, undefined);
      return;
    }
    parse(request, body as string, done);
  });
}

function installRequestHooks(app: FastifyInstance, metrics: ApiMetrics): void {
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    const started = process.hrtime.bigint();
    reply.raw.once("close", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observeHttp(request.method, routeLabel(request), reply.raw.statusCode, seconds);
    });
  });
}

function routeLabel(request: FastifyRequest): string {
  return request.is404 ? "unmatched" : (request.routeOptions.url ?? "unmatched");
}
