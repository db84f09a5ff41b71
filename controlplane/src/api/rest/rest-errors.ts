import { type ErrorBody, PersysError } from "@persys/schema";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { toHttpError } from "../errors/http-error.js";
import type { V1RouteConfig } from "./v1-routes.js";

/** The error body for a failure during a request, logging it when it was unexpected. */
export type ErrorBodyOf = (thrown: unknown, request: FastifyRequest) => ErrorBody;

/** Maps a failure to its status and body, naming bad fields by the route's body mapping. */
export function httpErrorFor(thrown: unknown, request: FastifyRequest) {
  const config = (request.routeOptions.config ?? {}) as V1RouteConfig;
  const mapped = toHttpError(
    thrown,
    { body: request.body, querystring: request.query, params: request.params, headers: request.headers },
    {
      ...(config.bodyPath ? { body: config.bodyPath } : {}),
      ...(config.bodyCode ? { bodyCode: config.bodyCode } : {}),
    },
    request.id,
  );
  if (mapped.unexpected) request.log.error({ err: thrown, requestId: request.id }, "REST handler failed unexpectedly");
  return mapped;
}

/** `ErrorBodyOf` for streams, whose failures after the headers are sent as a last event. */
export const streamErrorBody: ErrorBodyOf = (thrown, request) => httpErrorFor(thrown, request).body;

/**
 * Installs the one error shape for every failure of the instance's routes: PersysError → registry
 * status, validation and other client errors → 4xx naming the field, anything else → 500 INTERNAL with
 * a safe message (logged); unknown routes → 404 NOT_FOUND.
 */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const mapped = httpErrorFor(error, request);
    reply.status(mapped.status).send(mapped.body);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0]?.slice(0, 200) ?? "";
    const error = new PersysError("NOT_FOUND", `no route ${request.method} ${path}; see GET /v1/openapi.json`);
    reply.status(404).send(error.toBody());
  });
}
