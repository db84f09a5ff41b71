/**
 * `persys up` as a person runs it: it serves TLS with a fresh cluster CA, prints an admin token and
 * writes a persysctl context; with Docker it starts the local agent (a child process, its state and
 * certificate under the data dir) and a container applied through the REST API (HTTPS, bearer token)
 * runs; Ctrl-C stops both and the container keeps running. Without Docker it says so and runs with no node.
 * Needs the agent built (agent/dist), as scripts/test.sh does before the suites.
 */
import { type ChildProcess, execSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { httpsJson } from "../security/support/https-json.js";
import { freePort } from "../support/free-port.js";
import { type LaunchedPersysUp, launchPersysUp, testClusterFlags } from "../support/persys-up.js";
import { runDir } from "../support/services.js";
import { until } from "./support/agent-harness.js";
import {
  cleanupDocker,
  httpText,
  requireDocker,
  testId,
  WEB_IMAGE,
  workloadContainers,
} from "./support/docker-fixtures.js";

const launches: LaunchedPersysUp[] = [];
const nodes: string[] = [];
afterEach(async () => {
  await Promise.all(launches.splice(0).map((l) => l.stop()));
  await cleanupDocker(nodes.splice(0));
});

interface Up {
  child: ChildProcess;
  output: () => string;
  exited: () => Promise<number | null>;
  /** Calls the REST API as the printed admin token, trusting the printed CA. */
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** Runs `persys up` with its client config in `clientConfig` (PERSYS_CONFIG), never the user's. */
async function up(args: string[], clientConfig: string): Promise<Up> {
  const launched = await launchPersysUp({
    args,
    env: { PERSYS_CONFIG: clientConfig },
    needs: ["agent/dist/cli/persys-agent.js"],
    bannerTimeoutMs: 60_000,
  });
  launches.push(launched);
  const url = launched.printed("REST API").replace(/\/v1$/, "");
  const ca = readFileSync(launched.printed("CA"), "utf8");
  const token = launched.printed("token");
  return {
    child: launched.child,
    output: launched.output,
    exited: launched.exited,
    rest: (method, path, body) =>
      httpsJson(method, `${url}${path}`, { ca, token, ...(body === undefined ? {} : { body }) }),
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("persys up", () => {
  it("starts the local agent when Docker answers; a container runs; Ctrl-C stops both, the container stays", async () => {
    await requireDocker();
    const id = testId();
    const nodeId = `up-${id}`;
    nodes.push(nodeId);
    const dataDir = mkdtempSync(join(runDir(), "up-"));
    const clientConfig = join(dataDir, "client.yaml");
    const cluster = await testClusterFlags(dataDir, nodeId);
    const { grpc, http, agentGrpc, agentMetrics } = cluster.ports;
    const { child, output, rest, exited } = await up(cluster.args, clientConfig);
    expect(output()).toContain(`  REST API:  https://127.0.0.1:${http}/v1`);
    expect(output()).toContain(`  context:   persys-up in ${clientConfig} (admin certificate)`);
    expect(readFileSync(clientConfig, "utf8")).toContain(`endpoint: https://127.0.0.1:${grpc}`);
    expect(statSync(join(dataDir, "pki", "ca.key")).mode & 0o077).toBe(0);
    expect(statSync(join(dataDir, "agent", "tls", "node.key")).mode & 0o077).toBe(0);
    expect(output()).toContain(
      `node:      ${nodeId} (agent 127.0.0.1:${agentGrpc}, Docker /var/run/docker.sock, state in ${join(dataDir, "agent")})`,
    );
    expect((await fetch(`https://127.0.0.1:${http}/v1/nodes`).catch((e: Error) => e)) instanceof Error).toBe(true);
    await until(
      "the local node is ready",
      async () => (await rest("GET", `/v1/nodes/${nodeId}`)).body?.node?.state === "NODE_STATE_READY",
      30_000,
    );
    const port = await freePort();
    const wid = `upweb-${id}`;
    expect(
      (
        await rest("PUT", `/v1/workloads/${wid}`, {
          kind: "WORKLOAD_KIND_CONTAINER",
          container: { image: WEB_IMAGE, ports: [{ containerPort: 8080, hostPort: port }], stopTimeoutSeconds: 1 },
        })
      ).status,
    ).toBe(201);
    await until(
      "running",
      async () => (await rest("GET", `/v1/workloads/${wid}`)).body.workload.status.state === "WORKLOAD_STATE_RUNNING",
      30_000,
    );
    expect(await until("answers", () => httpText(`http://127.0.0.1:${port}/`))).toBe("persys web ok\n");
    expect(existsSync(join(dataDir, "agent", "agent.db"))).toBe(true);
    const health = await (await fetch(`http://127.0.0.1:${agentMetrics}/healthz`)).json();
    expect(health).toMatchObject({ status: "healthy", node: nodeId, registered: true, runtimeReady: true });

    // The agent is persys up's child: find it by its node id.
    const agentPid = Number(execSync(`pgrep -f -- "--node-id ${nodeId}"`, { encoding: "utf8" }).trim().split("\n")[0]);
    expect(alive(agentPid)).toBe(true);
    child.kill("SIGINT");
    expect(await exited()).toBe(0);
    await until("the agent stopped with it", () => !alive(agentPid), 10_000);
    const [c] = await workloadContainers(nodeId, wid);
    expect(c?.State).toBe("running");
  });

  it("says clearly that the cluster has no node when Docker does not answer", async () => {
    const [grpc, http] = [await freePort(), await freePort()];
    const socket = `/tmp/persys-no-docker-${testId()}.sock`;
    const dataDir = mkdtempSync(join(runDir(), "up-"));
    const { child, output, rest, exited } = await up(
      ["--data-dir", dataDir, "--grpc", `127.0.0.1:${grpc}`, "--http", `127.0.0.1:${http}`, "--docker-socket", socket],
      join(dataDir, "client.yaml"),
    );
    expect(output()).toContain(
      `persys: no Docker at ${socket}: the cluster has no node; start dockerd and run persys up again`,
    );
    expect(output()).toContain("node:      none");
    const nodes = await rest("GET", "/v1/nodes");
    expect(nodes.status).toBe(200);
    expect(nodes.body.nodes ?? []).toEqual([]);
    child.kill("SIGINT");
    expect(await exited()).toBe(0);
  });
});
