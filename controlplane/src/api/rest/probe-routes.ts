import type { FastifyInstance } from "fastify";
import type { ApiMetrics } from "../metrics.js";
import type { ServerHealth } from "../persys-api.js";

const probeTags = ["operations"];

/**
 * `/healthz` (liveness: 200 while the process runs), `/readyz` (readiness: 200 when it can serve,
 * 503 with the reason otherwise) and `/metrics` (Prometheus text of the shared registry). A probe
 * that throws counts as failing; these routes never return the error body, only their own shapes.
 */
export function registerProbeRoutes(app: FastifyInstance, health: ServerHealth, metrics: ApiMetrics): void {
  app.get(
    "/healthz",
    {
      schema: {
        operationId: "healthz",
        summary: "Liveness: 200 while the process runs.",
        tags: probeTags,
        response: { "2xx": statusSchema, "5xx": statusSchema },
      },
    },
    async (_request, reply) => {
      const live = safely(() => health.live(), false);
      return reply.status(live ? 200 : 503).send({ status: live ? "ok" : "failing" });
    },
  );
  app.get(
    "/readyz",
    {
      schema: {
        operationId: "readyz",
        summary: "Readiness: 200 when the server can serve requests, 503 with the reason otherwise.",
        tags: probeTags,
        response: { "2xx": readySchema, "5xx": readySchema },
      },
    },
    async (_request, reply) => {
      const state = safely(() => health.ready(), { ready: false, reason: "readiness probe failed" });
      const body = {
        ready: state.ready,
        ...(state.reason ? { reason: state.reason } : {}),
        ...(state.details ? { details: state.details } : {}),
      };
      return reply.status(state.ready ? 200 : 503).send(body);
    },
  );
  app.get(
    "/metrics",
    {
      schema: {
        operationId: "metrics",
        summary: "Prometheus metrics (text exposition format).",
        tags: probeTags,
        response: { 200: { type: "string", description: "Prometheus text format." } },
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await metrics.exposition();
      return reply.type(contentType).send(body);
    },
  );
}

const statusSchema = {
  type: "object",
  properties: { status: { type: "string", enum: ["ok", "failing"] } },
  required: ["status"],
};

const readySchema = {
  type: "object",
  properties: {
    ready: { type: "boolean" },
    reason: { type: "string" },
    details: { type: "object", additionalProperties: { type: "string" } },
  },
  required: ["ready"],
};

function safely<T>(probe: () => T, fallback: T): T {
  try {
    return probe();
  } catch {
    return fallback;
  }
}
