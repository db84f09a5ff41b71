/**
 * A Persys cluster for SDK and CLI tests: a real control plane (in-process `runServer`, embedded
 * stores, no services needed beyond a scratch folder) or a `persys server` child process, plus
 * simulated nodes speaking the real wire protocol so workloads actually reach RUNNING.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysClient, type PersysClientOptions } from "@persys/sdk";
import pino from "pino";
import { type RunningServer, runServer } from "../../controlplane/src/cli/run-server.js";
import { testConfig } from "../controlplane/control-plane-harness.js";
import { type ServerProcess, startServerProcess } from "../controlplane/server-process.js";
import { freePort } from "../support/free-port.js";
import { type SimNodeDescription, SimulatedNode, type SimulatedNodeOptions } from "../support/sim-agents/index.js";

/** A scratch folder: the test run's when the test command set one, else the OS temp folder. */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(process.env.PERSYS_TEST_RUN_DIR ?? tmpdir(), prefix));
}

/** A node of 2 cores, 2 GiB, 20 GiB in zone a, unless told otherwise. */
export const simNode = (id: string, extra: Partial<SimNodeDescription> = {}): SimNodeDescription => ({
  id,
  labels: { zone: "a" },
  capacity: { cpuMillicores: 2000, memoryMiB: 2048, diskGiB: 20 },
  ...extra,
});

/** A control plane with simulated nodes and an SDK client. */
export interface SdkCluster {
  /** `host:port` of the gRPC API. */
  readonly endpoint: string;
  readonly client: PersysClient;
  readonly nodes: SimulatedNode[];
  addNode(node: SimNodeDescription, options?: Partial<SimulatedNodeOptions>): Promise<SimulatedNode>;
  /** A further client of the same server. */
  newClient(options?: PersysClientOptions): PersysClient;
  close(): Promise<void>;
}

async function attachNode(
  endpoint: string,
  client: PersysClient,
  node: SimNodeDescription,
  options: Partial<SimulatedNodeOptions>,
): Promise<SimulatedNode> {
  const sim = await SimulatedNode.start({
    node,
    controlPlane: endpoint,
    heartbeatIntervalMs: 300,
    startDelayMs: 30,
    registerBackoff: { initialMs: 200, maxMs: 1_000 },
    ...options,
  });
  await sim.registered();
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client.nodes.get(node.id);
      return sim;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** An in-process control plane on embedded stores, with `nodes` attached. */
export async function startSdkCluster(
  nodes: readonly SimNodeDescription[] = [],
  overrides: Record<string, string> = {},
): Promise<SdkCluster & { readonly server: RunningServer }> {
  const server = await runServer(testConfig({ "data-dir": scratchDir("sdk-"), ...overrides }, "embedded"), {
    logger: pino({ level: "warn" }),
  });
  await server.controlPlane.whenLeader();
  const endpoint = server.grpcAddress;
  const clients: PersysClient[] = [];
  const newClient = (options: PersysClientOptions = {}) => {
    const c = new PersysClient({ endpoint, ...options });
    clients.push(c);
    return c;
  };
  const client = newClient();
  const sims: SimulatedNode[] = [];
  const cluster = {
    server,
    endpoint,
    client,
    nodes: sims,
    newClient,
    async addNode(node: SimNodeDescription, options: Partial<SimulatedNodeOptions> = {}) {
      const sim = await attachNode(endpoint, client, node, options);
      sims.push(sim);
      return sim;
    },
    async close() {
      for (const c of clients) c.close();
      await Promise.allSettled(sims.map((n) => n.close()));
      await server.close();
    },
  };
  for (const node of nodes) await cluster.addNode(node);
  return cluster;
}

/** A `persys server` child process on embedded stores that can be killed and started again on the same port and data. */
export interface RestartableServer {
  readonly endpoint: string;
  process(): ServerProcess;
  /** Kills the server (SIGKILL by default: nothing is flushed or closed gracefully). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again with the same data folder and address. */
  start(): Promise<void>;
}

/** Starts `persys server` as a child process on a fixed port with embedded stores in a fresh folder. */
export async function startServerChild(): Promise<RestartableServer> {
  const port = await freePort();
  const flags = {
    "data-dir": scratchDir("sdk-child-"),
    "listen-grpc": `127.0.0.1:${port}`,
    "listen-http": "127.0.0.1:0",
    "leader-ttl-seconds": "2",
    "nodes-lease-ttl-seconds": "3",
    "nodes-lost-after-seconds": "60",
    "log-level": "warn",
  };
  let current = await startServerProcess(flags);
  return {
    endpoint: `127.0.0.1:${port}`,
    process: () => current,
    kill: (signal = "SIGKILL") => current.kill(signal),
    async start() {
      current = await startServerProcess(flags);
    },
  };
}

/** Attaches a simulated node to any endpoint (for the child-process server). */
export function attachSimNode(
  endpoint: string,
  client: PersysClient,
  node: SimNodeDescription,
  options: Partial<SimulatedNodeOptions> = {},
): Promise<SimulatedNode> {
  return attachNode(endpoint, client, node, options);
}

/** Polls until `check` returns a truthy value, or fails naming `what` and the last value. */
export async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  let last: unknown;
  for (;;) {
    last = await check();
    if (last) return last as T;
    if (Date.now() - start > timeoutMs)
      throw new Error(`${what}: not true within ${timeoutMs} ms (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
