import { type JsonSchema, propertySchema, refTo, type SchemaCatalog } from "./json-schemas.js";
import type { V1Route } from "./v1-route-table.js";

const PACKAGE = "persys.api.v1";

/** The Fastify route schema of a `/v1` route: params, query, body, headers and responses. */
export interface RouteSchema {
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly params?: JsonSchema;
  readonly querystring: JsonSchema;
  readonly body?: JsonSchema;
  readonly headers?: JsonSchema;
  readonly response: Record<string, JsonSchema>;
}

/**
 * Builds the JSON Schemas of one route from the generated message schemas: path parameters and
 * query parameters take the schema of the request field they fill (enums inlined), the body is the
 * request (or one of its fields) by `$ref`, the success response is the response message, and every
 * 4xx/5xx is `persys.api.v1.Error`. Query and body schemas refuse unknown keys.
 *
 * @throws Error when the route names a message or field that does not exist.
 */
export function routeSchema(catalog: SchemaCatalog, route: V1Route): RouteSchema {
  const request = `${PACKAGE}.${route.request}`;
  const params = route.params ? objectOf(catalog, request, route.params, { required: true }) : undefined;
  // Every route declares its query, so an unknown parameter is a 400 everywhere.
  const querystring = objectOf(catalog, request, route.query ?? {}, { required: false });
  return {
    operationId: route.operationId ?? route.rpc,
    summary: route.summary,
    tags: [route.tag],
    ...(params ? { params } : {}),
    querystring,
    ...bodyOf(catalog, route, request),
    ...headersOf(route),
    response: responsesOf(route),
  };
}

function objectOf(
  catalog: SchemaCatalog,
  message: string,
  fields: Readonly<Record<string, string>>,
  { required }: { required: boolean },
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, path] of Object.entries(fields)) {
    const schema = fieldSchemaAt(catalog, message, path);
    properties[name] = required && schema.type === "string" ? { ...schema, minLength: 1 } : schema;
  }
  return {
    type: "object",
    properties,
    ...(required ? { required: Object.keys(fields) } : {}),
    additionalProperties: false,
  };
}

/** The schema of a dotted field path (`filter.workloadId`) inside a message, following `$ref`s. */
export function fieldSchemaAt(catalog: SchemaCatalog, message: string, path: string): JsonSchema {
  const [head = "", ...rest] = path.split(".");
  if (rest.length === 0) return propertySchema(catalog, message, head);
  const field = catalog.messages[message]?.find((f) => f.jsonName === head);
  if (!field?.typeRef || field.type !== "message") throw new Error(`${message}.${head} is not a message field`);
  return fieldSchemaAt(catalog, field.typeRef, rest.join("."));
}

function bodyOf(catalog: SchemaCatalog, route: V1Route, request: string): { body?: JsonSchema } {
  const body = route.body;
  if (!body) return {};
  if (body.kind === "field") return { body: fieldRef(catalog, request, body.field) };
  const taken = new Set(Object.values(route.params ?? {}).map((p) => p.split(".")[0]));
  if (taken.size === 0) return { body: refTo(request) };
  const properties: Record<string, JsonSchema> = {};
  for (const field of catalog.messages[request] ?? []) {
    if (!taken.has(field.jsonName)) properties[field.jsonName] = propertySchema(catalog, request, field.jsonName);
  }
  return { body: { type: "object", properties, additionalProperties: false } };
}

function fieldRef(catalog: SchemaCatalog, message: string, field: string): JsonSchema {
  const info = catalog.messages[message]?.find((f) => f.jsonName === field);
  if (!info?.typeRef) throw new Error(`${message}.${field} is not a message field`);
  return refTo(info.typeRef);
}

function headersOf(route: V1Route): { headers?: JsonSchema } {
  const properties: Record<string, JsonSchema> = {};
  if (route.preconditions) {
    properties["if-match"] = { type: "string", description: "Apply only if the stored revision is this one." };
    properties["if-none-match"] = { type: "string", enum: ["*"], description: "`*`: create only." };
  }
  if (route.resume) properties["last-event-id"] = { type: "string", description: "Resume after this event id." };
  if (route.stream === "ndjson-or-sse") {
    properties.accept = { type: "string", description: "`text/event-stream` for server-sent events." };
  }
  return Object.keys(properties).length > 0 ? { headers: { type: "object", properties } } : {};
}

function responsesOf(route: V1Route): Record<string, JsonSchema> {
  const response = refTo(`${PACKAGE}.${route.response}`);
  const error = { ...refTo(`${PACKAGE}.Error`), description: "The one error body." };
  const success: Record<string, JsonSchema> = {};
  if (route.stream === "sse") {
    success["200"] = {
      description: "Server-sent events; each `data:` is one JSON response, `event: error` ends the stream.",
      content: { "text/event-stream": { schema: response } },
    };
  } else if (route.stream === "ndjson-or-sse") {
    success["200"] = {
      description: "One JSON response per line (NDJSON), or server-sent events.",
      content: { "application/x-ndjson": { schema: response }, "text/event-stream": { schema: response } },
    };
  } else {
    success["200"] = { ...response, description: "Success." };
    if (route.preconditions) success["201"] = { ...response, description: "Created." };
  }
  return { ...success, "4xx": error, "5xx": error };
}
