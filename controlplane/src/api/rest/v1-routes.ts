import { api, invalid, PersysError } from "@persys/schema";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CallContext, PersysApi } from "../persys-api.js";
import type { SchemaCatalog } from "./json-schemas.js";
import { coerceQuery } from "./query-coercion.js";
import { type RestIdentify, restContext } from "./rest-context.js";
import type { ErrorBodyOf } from "./rest-errors.js";
import { replyWithStream } from "./stream-reply.js";
import { type RouteSchema, routeSchema } from "./v1-route-schemas.js";
import { type V1Route, v1Routes } from "./v1-route-table.js";

/** ts-proto's JSON half of a message codec. */
interface JsonCodec {
  fromJSON(object: unknown): unknown;
  toJSON(message: never): unknown;
}

/** Per-route facts the error handler needs to name bad fields (set as the route's `config`). */
export interface V1RouteConfig {
  readonly bodyPath?: string;
  readonly bodyCode?: "INVALID_SPEC" | "INVALID_ARGUMENT";
  readonly optionalBody?: boolean;
}

export interface V1RouteDeps {
  readonly api: PersysApi;
  readonly catalog: SchemaCatalog;
  readonly identify: RestIdentify;
  readonly errorBody: ErrorBodyOf;
  readonly heartbeatMs: number;
  readonly firstItemWaitMs: number;
  /** Aborted when the server closes: ends open streams. */
  readonly shutdown: AbortSignal;
}

/**
 * Registers every route of the `/v1` table. Each handler only maps: path, query and body (already
 * validated against the route schema) are merged into the request's proto3 JSON, decoded with the
 * request's `fromJSON`, passed to the PersysApi method, and the response is sent with `toJSON`
 * (streams as SSE or NDJSON).
 */
export function registerV1Routes(app: FastifyInstance, deps: V1RouteDeps): void {
  for (const route of v1Routes) {
    const schema = routeSchema(deps.catalog, route);
    const config: V1RouteConfig = {
      ...(route.body?.kind === "field" ? { bodyPath: route.body.field } : {}),
      ...(route.bodyCode ? { bodyCode: route.bodyCode } : {}),
      ...(route.body?.kind === "rest" && !route.body.required ? { optionalBody: true } : {}),
    };
    const requestCodec = codec(route.request);
    const responseCodec = codec(route.response);
    const method = deps.api[route.rpc] as (request: unknown, ctx: CallContext) => unknown;
    app.route({
      method: route.method,
      url: route.url,
      schema: schema as RouteSchema & Record<string, unknown>,
      config,
      preValidation: async (request) => {
        // An action POSTed without a body means "no options".
        if (config.optionalBody && request.body === undefined) request.body = {};
        if (schema.params) request.params = coerceQuery(request.params as Record<string, unknown>, schema.params);
        if (schema.querystring) {
          request.query = coerceQuery(request.query as Record<string, unknown>, schema.querystring);
        }
      },
      handler: async (request, reply) => {
        const message = requestCodec.fromJSON(requestJson(route, request));
        const ctx = restContext(request, reply, deps.identify, deps.shutdown);
        const result = method.call(deps.api, message, ctx);
        if (route.stream) return streamResponse(route, request, reply, result as AsyncIterable<never>, ctx, deps);
        const response = responseCodec.toJSON((await result) as never);
        decorate(route, reply, response);
        return response;
      },
    });
  }
}

function codec(name: string): JsonCodec {
  const found = (api as unknown as Record<string, JsonCodec | undefined>)[name];
  if (typeof found?.fromJSON !== "function") throw new Error(`persys.api.v1 has no message ${name}`);
  return found;
}

/** The request's proto3 JSON: the body (or the body as one field), then path and query parameters. */
export function requestJson(route: V1Route, request: FastifyRequest): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  const body = request.body as Record<string, unknown> | undefined;
  if (route.body?.kind === "rest" && body) Object.assign(json, body);
  if (route.body?.kind === "field" && body !== undefined) json[route.body.field] = body;
  const params = request.params as Record<string, string>;
  for (const [name, path] of Object.entries(route.params ?? {}))
    place(json, path, params[name], `path parameter ${name}`);
  const query = request.query as Record<string, unknown>;
  for (const [name, path] of Object.entries(route.query ?? {})) {
    if (query[name] !== undefined) place(json, path, query[name], `query parameter ${name}`);
  }
  if (route.preconditions) applyPreconditions(json, request);
  if (route.resume) resumeFrom(json, route.resume.field, request);
  return json;
}

/** Sets a dotted path; a different value already there (from the body) is a 400 naming the field. */
function place(json: Record<string, unknown>, path: string, value: unknown, source: string): void {
  const keys = path.split(".");
  const last = keys.pop() as string;
  let node = json;
  for (const key of keys) {
    const child = node[key];
    if (typeof child !== "object" || child === null || Array.isArray(child)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const existing = node[last];
  if (existing !== undefined && existing !== "" && existing !== value) {
    throw invalid("INVALID_ARGUMENT", [
      { path, reason: `is ${JSON.stringify(existing)} but the ${source} says ${JSON.stringify(value)}` },
    ]);
  }
  node[last] = value;
}

function applyPreconditions(json: Record<string, unknown>, request: FastifyRequest): void {
  const ifMatch = request.headers["if-match"];
  const ifNoneMatch = request.headers["if-none-match"];
  if (typeof ifMatch === "string" && ifMatch) {
    place(json, "expectedRevision", ifMatch.replace(/^W\//, "").replace(/^"(.*)"$/, "$1"), "If-Match header");
  } else if (ifNoneMatch === "*") {
    if (json.expectedRevision !== undefined && json.expectedRevision !== "") {
      throw invalid("INVALID_ARGUMENT", [{ path: "expectedRevision", reason: "conflicts with If-None-Match: *" }]);
    }
    json.expectedRevision = "";
  }
}

/** `Last-Event-ID` (sent by EventSource on reconnect) wins over the query parameter it replaces. */
function resumeFrom(json: Record<string, unknown>, field: string, request: FastifyRequest): void {
  const lastEventId = request.headers["last-event-id"];
  if (typeof lastEventId !== "string" || lastEventId === "") return;
  if (field === "afterStoreRevision" && !/^\d+$/.test(lastEventId)) {
    throw invalid("INVALID_ARGUMENT", [{ path: "Last-Event-ID", reason: "must be a store revision (an integer)" }]);
  }
  json[field] = field === "afterStoreRevision" ? Number(lastEventId) : lastEventId;
}

/** 201 for a created workload; the revision as ETag on single-workload reads and writes. */
function decorate(route: V1Route, reply: FastifyReply, response: unknown): void {
  const body = response as { created?: boolean; workload?: { status?: { revision?: string } } };
  if (route.preconditions && body.created) reply.status(201);
  const revision = body.workload?.status?.revision;
  if (revision && (route.rpc === "applyWorkload" || route.rpc === "getWorkload")) reply.header("etag", `"${revision}"`);
}

function streamResponse(
  route: V1Route,
  request: FastifyRequest,
  reply: FastifyReply,
  iterable: AsyncIterable<never>,
  ctx: CallContext,
  deps: V1RouteDeps,
): Promise<void> {
  const responseCodec = codec(route.response);
  const accept = String(request.headers.accept ?? "");
  const format = route.stream === "sse" || accept.includes("text/event-stream") ? "sse" : "ndjson";
  const idPath = route.resume?.eventId.split(".");
  if (!iterable || typeof (iterable as Partial<AsyncIterable<never>>)[Symbol.asyncIterator] !== "function") {
    throw new PersysError("INTERNAL", `${route.rpc} did not return a stream`);
  }
  return replyWithStream(reply, iterable, {
    format,
    toJSON: (item) => responseCodec.toJSON(item),
    ...(idPath ? { eventId: (json: unknown) => idAt(json, idPath) } : {}),
    errorBody: (thrown) => deps.errorBody(thrown, request),
    signal: ctx.signal,
    heartbeatMs: deps.heartbeatMs,
    firstItemWaitMs: deps.firstItemWaitMs,
  });
}

function idAt(json: unknown, path: readonly string[]): string | undefined {
  let node = json;
  for (const key of path)
    node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node === undefined || node === null || node === "" ? undefined : String(node);
}
