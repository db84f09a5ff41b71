/**
 * A real control plane (gRPC + REST, real etcd and Redis from the test command, a unique key prefix
 * per test) and simulated agents that speak the real wire protocol.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { loadServerConfig, type ServerConfig } from "@persys/controlplane";
import pino from "pino";
import { type RunningServer, runServer } from "../../controlplane/src/cli/run-server.js";
import { etcdEndpoints, redisUrl, runDir } from "../support/services.js";
import { type SimNodeDescription, SimulatedNode, type SimulatedNodeOptions } from "../support/sim-agents/index.js";

export interface Harness {
  readonly server: RunningServer;
  readonly config: ServerConfig;
  readonly nodes: SimulatedNode[];
  /** Calls the REST API; returns status and parsed JSON body. */
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  addNode(
    node: Partial<SimNodeDescription> & { id: string },
    options?: Partial<SimulatedNodeOptions>,
  ): Promise<SimulatedNode>;
  close(): Promise<void>;
}

let counter = 0;

export function testConfig(overrides: Record<string, string> = {}, stores: "real" | "embedded" = "real"): ServerConfig {
  const prefix = `/persys-test/cp-${process.pid}-${Date.now().toString(36)}-${counter++}/`;
  return loadServerConfig({
    flags: {
      "data-dir": mkdtempSync(join(runDir(), "cp-")),
      "listen-grpc": "127.0.0.1:0",
      "listen-http": "127.0.0.1:0",
      "nodes-lease-ttl-seconds": "2",
      "nodes-lost-after-seconds": "3",
      "leader-ttl-seconds": "3",
      "log-level": "warn",
      // Plaintext, unauthenticated calls act as admin: these suites test scheduling, not security
      // (test/security does). Tokens presented are still checked.
      insecure: "true",
      ...(stores === "real"
        ? {
            "state-kind": "etcd",
            "state-endpoints": etcdEndpoints().join(","),
            "state-prefix": prefix,
            "events-kind": "redis",
            "events-url": redisUrl(),
            "events-prefix": `${prefix.replaceAll("/", ":")}`,
          }
        : {}),
      ...overrides,
    },
  });
}

export const smallNode = (id: string, extra: Partial<SimNodeDescription> = {}): SimNodeDescription => ({
  id,
  labels: { zone: "a" },
  capacity: { cpuMillicores: 2000, memoryMiB: 2048, diskGiB: 20 },
  ...extra,
});

export async function startHarness(config = testConfig()): Promise<Harness> {
  const server = await runServer(config, { logger: pino({ level: "warn" }) });
  await server.controlPlane.whenLeader();
  const nodes: SimulatedNode[] = [];
  const rest: Harness["rest"] = async (method, path, body) => {
    const response = await fetch(`${server.httpUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    server,
    config,
    nodes,
    rest,
    async addNode(node, options = {}) {
      const sim = await SimulatedNode.start({
        node: { ...smallNode(node.id), ...node },
        controlPlane: server.grpcAddress,
        heartbeatIntervalMs: 300,
        startDelayMs: 30,
        ...options,
      });
      nodes.push(sim);
      await sim.registered();
      await until(
        `node ${node.id} known to the control plane`,
        async () => (await rest("GET", `/v1/nodes/${node.id}`)).status === 200,
      );
      return sim;
    },
    async close() {
      await Promise.allSettled(nodes.map((n) => n.close()));
      await server.close();
    },
  };
}

/** Polls until `check` returns a truthy value (returned), or fails with the last value seen. */
export async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  let last: unknown;
  for (;;) {
    last = await check();
    if (last) return last as T;
    if (Date.now() - start > timeoutMs)
      throw new Error(`${what}: not true within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const container = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: "WORKLOAD_KIND_CONTAINER",
  resources: { cpuMillicores: 250, memoryMib: 256 },
  container: { image: "persys-test/web:1", ports: [{ containerPort: 8080 }] },
  ...extra,
});
