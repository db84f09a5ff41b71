import { control, PersysError } from "@persys/schema";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { toHttpError } from "../../errors/http-error.js";
import type { AgentControlApi, CallContext } from "../../persys-api.js";
import type { JsonSchema, SchemaCatalog } from "../json-schemas.js";
import { type RestIdentify, restContext } from "../rest-context.js";
import { fromProtoJson, ProtoJsonError, toProtoNames } from "./protojson.js";
import { protoNameSchemaId, protoNameSchemas } from "./protojson-schemas.js";

const PACKAGE = "persys.control.v1";

/** One route of the Go persys-gateway over an AgentControl RPC. */
interface CompatRoute {
  readonly method: "GET" | "POST" | "DELETE";
  readonly url: string;
  readonly rpc: keyof AgentControlApi;
  /** Request and response message names in persys.control.v1. */
  readonly request: string;
  readonly response: string;
  readonly summary: string;
  /** The whole body is the request (protojson). */
  readonly body?: boolean;
  /** `:id` fills this request field (proto name). */
  readonly id?: string;
  /** Query parameters copied to same-named request fields. */
  readonly query?: readonly string[];
  /** Not also served under `/clusters/:cluster_id` (the gateway's `/list`). */
  readonly rootOnly?: boolean;
}

/**
 * The gateway's routes (wire-contract.md §5). Unlike the Go gateway, `GET /workloads` and `GET /list`
 * forward `node_id` as well as `status`.
 */
const compatRoutes: readonly CompatRoute[] = [
  {
    method: "POST",
    url: "/workloads/schedule",
    rpc: "applyWorkload",
    request: "ApplyWorkloadRequest",
    response: "ApplyWorkloadResponse",
    summary: "Apply a workload (body: persys.control.v1.ApplyWorkloadRequest in protojson).",
    body: true,
  },
  ...["/workloads", "/list"].map(
    (url): CompatRoute => ({
      method: "GET",
      url,
      rpc: "listWorkloads",
      request: "ListWorkloadsRequest",
      response: "ListWorkloadsResponse",
      summary: "List workloads, filtered by `status` and `node_id`.",
      query: ["status", "node_id"],
      rootOnly: url === "/list",
    }),
  ),
  {
    method: "GET",
    url: "/workloads/:id",
    rpc: "getWorkload",
    request: "GetWorkloadRequest",
    response: "GetWorkloadResponse",
    summary: "Read one workload.",
    id: "workload_id",
  },
  {
    method: "DELETE",
    url: "/workloads/:id",
    rpc: "deleteWorkload",
    request: "DeleteWorkloadRequest",
    response: "DeleteWorkloadResponse",
    summary: "Mark a workload for deletion.",
    id: "workload_id",
  },
  {
    method: "POST",
    url: "/workloads/:id/retry",
    rpc: "retryWorkload",
    request: "RetryWorkloadRequest",
    response: "RetryWorkloadResponse",
    summary: "Reset a workload's retry backoff.",
    id: "workload_id",
  },
  {
    method: "GET",
    url: "/nodes",
    rpc: "listNodes",
    request: "ListNodesRequest",
    response: "ListNodesResponse",
    summary: "List nodes, filtered by `status`.",
    query: ["status"],
  },
  {
    method: "GET",
    url: "/nodes/:id",
    rpc: "getNode",
    request: "GetNodeRequest",
    response: "GetNodeResponse",
    summary: "Read one node.",
    id: "node_id",
  },
  {
    method: "GET",
    url: "/cluster/metrics",
    rpc: "getClusterSummary",
    request: "GetClusterSummaryRequest",
    response: "GetClusterSummaryResponse",
    summary: "Cluster counts.",
  },
];

/** The protojson (proto names) schemas of the compat responses; add them to the root instance. */
export function compatSchemas(catalog: SchemaCatalog): JsonSchema[] {
  return protoNameSchemas(
    catalog,
    compatRoutes.map((r) => `${PACKAGE}.${r.response}`),
  );
}

export interface CompatRouteOptions {
  readonly agentControl: AgentControlApi;
  readonly catalog: SchemaCatalog;
  readonly identify: RestIdentify;
  /** Accepted cluster ids (path `:cluster_id`, header `X-Persys-Cluster-ID`, query `cluster_id`). Default: any. */
  readonly clusterIds?: readonly string[];
}

interface JsonCodec {
  fromJSON(object: unknown): unknown;
  toJSON(message: never): unknown;
}

/**
 * Fastify plugin with the Go gateway's HTTP/JSON routes over AgentControlApi, also under
 * `/clusters/:cluster_id/...` (except `/list`). Bodies are read like protojson with DiscardUnknown
 * (proto or JSON names, unknown keys ignored); responses are written like protojson with
 * UseProtoNames. Errors are `{"error": "..."}`: 400 for bad bodies, parameters or an unknown cluster,
 * 404 for NOT_FOUND, otherwise the registry's status. Register it encapsulated (not with
 * fastify-plugin): it installs its own error handler and body parsers.
 */
export async function registerCompatRoutes(app: FastifyInstance, options: CompatRouteOptions): Promise<void> {
  installLenientJsonParser(app);
  // Gin's c.Query reads the first value of a repeated parameter.
  app.addHook("preValidation", async (request) => {
    const query = request.query as Record<string, unknown>;
    request.query = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  });
  app.setErrorHandler((error, request, reply) => {
    const { status, message } = compatError(error, request);
    reply.status(status).send({ error: message });
  });
  for (const route of compatRoutes) {
    const requestCodec = codec(route.request);
    const responseCodec = codec(route.response);
    const method = options.agentControl[route.rpc] as (request: unknown, ctx: CallContext) => Promise<unknown>;
    const handler = async (request: FastifyRequest, reply: Parameters<typeof restContext>[1]) => {
      checkCluster(request, options.clusterIds);
      const json = requestJson(options.catalog, route, request);
      const ctx = restContext(request, reply, options.identify);
      const response = await method.call(options.agentControl, requestCodec.fromJSON(json), ctx);
      return toProtoNames(options.catalog, `${PACKAGE}.${route.response}`, responseCodec.toJSON(response as never));
    };
    const urls = route.rootOnly ? [route.url] : [route.url, `/clusters/:cluster_id${route.url}`];
    for (const url of urls) {
      app.route({ method: route.method, url, schema: routeSchema(route, url), handler });
    }
  }
}

function requestJson(catalog: SchemaCatalog, route: CompatRoute, request: FastifyRequest): Record<string, unknown> {
  const message = `${PACKAGE}.${route.request}`;
  if (route.body) {
    if (request.body === undefined) throw new ProtoJsonError("the body is empty");
    return fromProtoJson(catalog, message, request.body);
  }
  const fields: Record<string, unknown> = {};
  const query = request.query as Record<string, unknown>;
  for (const name of route.query ?? []) {
    const value = firstOf(query[name]);
    if (value !== undefined) fields[name] = value;
  }
  if (route.id) fields[route.id] = (request.params as Record<string, string>).id;
  return fromProtoJson(catalog, message, fields);
}

function checkCluster(request: FastifyRequest, accepted: readonly string[] | undefined): void {
  if (!accepted) return;
  const params = request.params as Record<string, string | undefined>;
  const header = request.headers["x-persys-cluster-id"];
  const given = params.cluster_id ?? firstOf(header) ?? firstOf((request.query as Record<string, unknown>).cluster_id);
  if (typeof given === "string" && given !== "" && !accepted.includes(given)) {
    throw new PersysError("INVALID_ARGUMENT", `unknown cluster "${given}"`);
  }
}

function firstOf(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : undefined;
}

function compatError(error: unknown, request: FastifyRequest): { status: number; message: string } {
  if (error instanceof ProtoJsonError) return { status: 400, message: `proto: ${error.message}` };
  const mapped = toHttpError(error, { querystring: request.query, params: request.params }, {}, request.id);
  if (mapped.unexpected) request.log.error({ err: error, requestId: request.id }, "compat handler failed unexpectedly");
  return { status: mapped.status, message: mapped.body.message };
}

/** Like the Go gateway: any content type is read as JSON, and an empty body is no body. */
function installLenientJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (request, body, done) => {
    if (body === "") {
      done(null, undefined);
      return;
    }
    parse(request, body as string, done);
  });
}

function codec(name: string): JsonCodec {
  const found = (control as unknown as Record<string, JsonCodec | undefined>)[name];
  if (typeof found?.fromJSON !== "function") throw new Error(`${PACKAGE} has no message ${name}`);
  return found;
}

const errorSchema = {
  type: "object",
  properties: { error: { type: "string" } },
  required: ["error"],
  description: "The Go gateway's error shape.",
};

function routeSchema(route: CompatRoute, url: string): Record<string, unknown> {
  const params: Record<string, JsonSchema> = {};
  if (url.includes(":cluster_id")) params.cluster_id = { type: "string", minLength: 1 };
  if (route.id) params.id = { type: "string", minLength: 1, description: `The ${route.id}.` };
  const query: Record<string, JsonSchema> = { cluster_id: { type: "string" } };
  for (const name of route.query ?? []) query[name] = { type: "string" };
  return {
    summary: route.summary,
    tags: ["compat"],
    operationId: `compat${url.startsWith("/clusters") ? "Cluster" : ""}${capitalise(route.rpc)}${url === "/list" ? "List" : ""}`,
    ...(Object.keys(params).length > 0
      ? { params: { type: "object", properties: params, required: Object.keys(params) } }
      : {}),
    querystring: { type: "object", properties: query },
    ...(route.body
      ? {
          body: {
            type: "object",
            description: `${PACKAGE}.${route.request} in protojson: proto or JSON field names; unknown keys are ignored.`,
          },
        }
      : {}),
    response: {
      200: { $ref: `${protoNameSchemaId(`${PACKAGE}.${route.response}`)}#`, description: "protojson, proto names." },
      "4xx": errorSchema,
      "5xx": errorSchema,
    },
  };
}

function capitalise(word: string): string {
  return `${word.charAt(0).toUpperCase()}${word.slice(1)}`;
}
