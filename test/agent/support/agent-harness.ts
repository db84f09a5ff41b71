/**
 * A real control plane (real etcd and Redis, short leases) with real agents on the real Docker
 * daemon: in this process (`addAgent`) or as `persys-agent` child processes (`spawnAgent`, for
 * SIGKILL). Everything a test's nodes create is removed by `close()`.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { loadAgentConfig, NodeAgent } from "@persys/agent";
import pino from "pino";
import { startHarness, testConfig } from "../../controlplane/control-plane-harness.js";
import { runDir } from "../../support/services.js";
import { AgentProcess, type AgentProcessOptions } from "./agent-process.js";
import { cleanupDocker, requireDocker, testId } from "./docker-fixtures.js";

export interface DockerHarness {
  /** This test's id: prefix of its node and workload ids. */
  readonly id: string;
  readonly grpcAddress: string;
  readonly httpUrl: string;
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Starts an agent in this process, registered with the control plane; waits until the node is known. */
  addAgent(name: string, flags?: Record<string, string>): Promise<NodeAgent>;
  /** Starts `persys-agent` as a child process; waits until the node is known. */
  spawnAgent(
    name: string,
    flags?: Record<string, string>,
    options?: Partial<AgentProcessOptions>,
  ): Promise<AgentProcess>;
  /** Node id of an agent by name: `<name>-<test id>`. */
  nodeId(name: string): string;
  /** Named volumes to remove at the end. */
  readonly volumes: string[];
  /** The replica status of a workload from the API (`GET /v1/workloads/{id}`). */
  replica(workloadId: string, index?: number): Promise<any>;
  close(): Promise<void>;
}

/** Flags every test agent gets: loopback, free ports, a state dir of its own, quick reports and GC. */
export function agentFlags(nodeId: string, controlPlane: string, stateDir: string): Record<string, string> {
  return {
    "node-id": nodeId,
    "node-labels": "persys-test=agent",
    "control-plane-endpoints": controlPlane,
    "listen-grpc": "127.0.0.1:0",
    "listen-metrics": "127.0.0.1:0",
    "state-dir": stateDir,
    "heartbeat-interval-seconds": "0.5",
    "gc-orphan-grace-seconds": "3",
    "gc-interval-seconds": "0.5",
    "usage-stats-interval-seconds": "1",
    "log-level": "error",
    // Plaintext against the plaintext test control plane (test/security runs agents with TLS).
    insecure: "true",
  };
}

export async function startDockerHarness(overrides: Record<string, string> = {}): Promise<DockerHarness> {
  await requireDocker();
  const id = testId();
  const h = await startHarness(testConfig({ "reconciler-resync-seconds": "5", ...overrides }));
  const agents: NodeAgent[] = [];
  const processes: AgentProcess[] = [];
  const nodes = new Set<string>();
  const volumes: string[] = [];
  const nodeId = (name: string) => `${name}-${id}`;
  const known = async (node: string) =>
    until(`node ${node} registered`, async () => (await h.rest("GET", `/v1/nodes/${node}`)).status === 200, 20_000);
  return {
    id,
    grpcAddress: h.server.grpcAddress,
    httpUrl: h.server.httpUrl,
    rest: h.rest,
    volumes,
    nodeId,
    async addAgent(name, flags = {}) {
      const node = nodeId(name);
      nodes.add(node);
      const stateDir = flags["state-dir"] ?? mkdtempSync(join(runDir(), `agent-${node}-`));
      const config = loadAgentConfig({ flags: { ...agentFlags(node, h.server.grpcAddress, stateDir), ...flags } });
      const agent = await NodeAgent.start(config, { logger: pino({ level: "error" }) });
      agents.push(agent);
      await known(node);
      return agent;
    },
    async spawnAgent(name, flags = {}, options = {}) {
      const node = nodeId(name);
      nodes.add(node);
      const stateDir = flags["state-dir"] ?? mkdtempSync(join(runDir(), `agent-${node}-`));
      const child = await AgentProcess.start({
        flags: { ...agentFlags(node, h.server.grpcAddress, stateDir), ...flags },
        ...options,
      });
      processes.push(child);
      await known(node);
      return child;
    },
    async replica(workloadId, index = 0) {
      const got = await h.rest("GET", `/v1/workloads/${workloadId}`);
      return got.body?.workload?.status?.replicas?.find((r: any) => (r.index ?? 0) === index);
    },
    async close() {
      await Promise.allSettled(processes.map((p) => p.kill("SIGKILL")));
      await Promise.allSettled(agents.map((a) => a.close()));
      await h.close();
      await cleanupDocker([...nodes], volumes);
    },
  };
}

/** Polls `check` every 50 ms until it returns a truthy value (returned), or fails with the last value seen. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
): Promise<T> {
  const start = Date.now();
  let last: unknown;
  for (;;) {
    last = await check();
    if (last) return last as T;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`${what}: not true within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
