import { type ErrorBody, invalid, PersysError } from "@persys/schema";
import { type SchemaValidationIssue, violationsOf } from "./validation-details.js";
import { classifyError } from "./wire-error.js";

/** An HTTP error response: the status and the one error body. */
export interface HttpError {
  readonly status: number;
  readonly body: ErrorBody;
  /** The error was not a PersysError nor a client mistake: log it. */
  readonly unexpected: boolean;
  readonly error: PersysError;
}

/** Where a request's parts land in the API request message, for naming bad fields. */
export interface RequestPartPaths {
  /** Prefix of body field paths, e.g. "workload" when the body is the request's `workload` field. */
  readonly body?: string;
  /** Error code of a body that fails its schema: INVALID_SPEC for workload specs, else INVALID_ARGUMENT. */
  readonly bodyCode?: "INVALID_SPEC" | "INVALID_ARGUMENT";
}

/** The fields of a Fastify error this module reads. */
interface FastifyErrorLike {
  readonly code?: unknown;
  readonly statusCode?: unknown;
  readonly message?: unknown;
  readonly validation?: readonly SchemaValidationIssue[];
  readonly validationContext?: unknown;
}

/** Request data that failed validation, by Fastify's validation context. */
export interface ValidatedParts {
  readonly body?: unknown;
  readonly querystring?: unknown;
  readonly params?: unknown;
  readonly headers?: unknown;
}

/**
 * Maps anything a REST handler threw (or Fastify raised) to a status and the error body:
 * - a PersysError → the registry's HTTP status;
 * - a schema validation failure → 400 INVALID_ARGUMENT (INVALID_SPEC for workload bodies) naming
 *   the field path (`workload.container.ports[0].hostPort`), the query parameter or the path parameter;
 * - any other Fastify client error (malformed JSON 400, body too large 413, unsupported media type
 *   415, ...) → its 4xx status with code INVALID_ARGUMENT;
 * - anything else → 500 INTERNAL with a safe message (`unexpected` is set so the caller logs it).
 */
export function toHttpError(
  thrown: unknown,
  parts: ValidatedParts = {},
  paths: RequestPartPaths = {},
  requestId?: string,
): HttpError {
  if (thrown instanceof PersysError) return respond(thrown, false);
  const fastify = (typeof thrown === "object" && thrown !== null ? thrown : {}) as FastifyErrorLike;
  if (Array.isArray(fastify.validation)) {
    const context = String(fastify.validationContext ?? "body");
    const error = validationError(context, fastify.validation, parts, paths);
    return respond(error, false);
  }
  const status = typeof fastify.statusCode === "number" ? fastify.statusCode : 0;
  if (status >= 400 && status < 500) {
    const message = clientMessage(fastify);
    const error = new PersysError("INVALID_ARGUMENT", message, {
      cause: thrown,
      details: [{ path: "body", reason: message }],
    });
    return { status, body: error.toBody(), unexpected: false, error };
  }
  const { error, unexpected } = classifyError(thrown, requestId);
  return respond(error, unexpected);
}

function respond(error: PersysError, unexpected: boolean): HttpError {
  return { status: error.httpStatus, body: error.toBody(), unexpected, error };
}

function validationError(
  context: string,
  issues: readonly SchemaValidationIssue[],
  parts: ValidatedParts,
  paths: RequestPartPaths,
): PersysError {
  switch (context) {
    case "querystring":
      return invalid(
        "INVALID_ARGUMENT",
        violationsOf(issues, parts.querystring, "", "unknown query parameter"),
        "query",
      );
    case "params":
      return invalid("INVALID_ARGUMENT", violationsOf(issues, parts.params), "path");
    case "headers":
      return invalid("INVALID_ARGUMENT", violationsOf(issues, parts.headers, "", "unknown header"), "header");
    default:
      return invalid(paths.bodyCode ?? "INVALID_ARGUMENT", violationsOf(issues, parts.body, paths.body ?? ""), "body");
  }
}

const clientMessages: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "the body is not valid JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "the body is empty but the content type is application/json",
  FST_ERR_CTP_BODY_TOO_LARGE: "the body is too large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported content type; send application/json",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "the Content-Length does not match the body",
};

function clientMessage(error: FastifyErrorLike): string {
  const known = typeof error.code === "string" ? clientMessages[error.code] : undefined;
  if (known) return known;
  return typeof error.message === "string" && error.message ? error.message : "bad request";
}
