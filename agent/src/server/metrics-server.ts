import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A started HTTP listener for /metrics and /healthz. */
export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text from `registry`) and `GET /healthz` (200 with the agent's
 * health as JSON: the process is alive and heartbeating; `runtimeReady` says whether Docker is) on
 * `host:port`. Anything else is 404.
 */
export async function startMetricsServer(options: {
  readonly address: string;
  readonly registry: Registry;
  readonly health: () => Record<string, unknown>;
}): Promise<MetricsServer> {
  const at = options.address.lastIndexOf(":");
  const host = options.address.slice(0, at).replace(/^\[|\]$/g, "");
  const port = Number(options.address.slice(at + 1));
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      options.registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": options.registry.contentType });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(String(error));
        },
      );
      return;
    }
    if (req.method === "GET" && (path === "/healthz" || path === "/health")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "healthy", ...options.health() }));
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
