import { Counter, Histogram, Registry } from "prom-client";

/** Latency buckets (seconds) for API calls: 1 ms to 30 s; streams that outlive them land in +Inf. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Request metrics of the API transports, in one Prometheus registry that the rest of the control plane
 * registers its own metrics in too (pass `registry` to share one; `/metrics` serves it).
 *
 * - `persys_http_requests_total{method, route, status}` and `persys_http_request_duration_seconds`:
 *   `route` is the route template (`/v1/workloads/:workloadId`), or `unmatched` for unknown paths,
 *   so the label set stays bounded whatever clients send.
 * - `persys_grpc_server_handled_total{grpc_service, grpc_method, grpc_type, grpc_code}` and
 *   `persys_grpc_server_handling_seconds`: `grpc_code` is the status name (`OK`, `NOT_FOUND`, ...),
 *   `grpc_type` is `unary` or `server_stream`; a stream's duration is its whole lifetime.
 */
export class ApiMetrics {
  readonly registry: Registry;
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpDuration: Histogram<"method" | "route">;
  private readonly grpcHandled: Counter<"grpc_service" | "grpc_method" | "grpc_type" | "grpc_code">;
  private readonly grpcDuration: Histogram<"grpc_service" | "grpc_method" | "grpc_type">;

  /** @throws Error when `registry` already holds metrics with these names (create one ApiMetrics per registry). */
  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    this.httpRequests = new Counter({
      name: "persys_http_requests_total",
      help: "HTTP requests answered by the REST API, by route template and status code.",
      labelNames: ["method", "route", "status"],
      registers: [registry],
    });
    this.httpDuration = new Histogram({
      name: "persys_http_request_duration_seconds",
      help: "Time from receiving an HTTP request to the end of its response.",
      labelNames: ["method", "route"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.grpcHandled = new Counter({
      name: "persys_grpc_server_handled_total",
      help: "gRPC calls completed by the server, by method and status code.",
      labelNames: ["grpc_service", "grpc_method", "grpc_type", "grpc_code"],
      registers: [registry],
    });
    this.grpcDuration = new Histogram({
      name: "persys_grpc_server_handling_seconds",
      help: "Time from receiving a gRPC call to sending its status.",
      labelNames: ["grpc_service", "grpc_method", "grpc_type"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  /** Records one answered HTTP request. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  /** Records one finished gRPC call. */
  observeGrpc(
    service: string,
    method: string,
    type: "unary" | "server_stream" | "bidi_stream",
    code: string,
    seconds: number,
  ): void {
    this.grpcHandled.inc({ grpc_service: service, grpc_method: method, grpc_type: type, grpc_code: code });
    this.grpcDuration.observe({ grpc_service: service, grpc_method: method, grpc_type: type }, seconds);
  }

  /** The registry in the Prometheus text format, with its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
