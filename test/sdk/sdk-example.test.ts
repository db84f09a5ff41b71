/**
 * examples/sdk-app against `persys up` as a person runs it: the control plane on embedded stores
 * and its local node agent on the real Docker. The app applies a container, waits until it runs,
 * prints the explanation and deletes it; then the SDK reads a container's logs (all, tail, follow).
 * Needs the agent built (agent/dist) and Docker with the test images, as scripts/test.sh provides.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { api, container, PersysClient } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUSYBOX_IMAGE, cleanupDocker, requireDocker, testId } from "../agent/support/docker-fixtures.js";
import { freePort } from "../support/free-port.js";
import { scratchDir } from "./sdk-cluster.js";

const root = resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
const id = testId();
const nodeId = `sdk-${id}`;
let endpoint = "";
const clientConfig = join(scratchDir("sdk-client-"), "config.yaml");
let client: PersysClient;

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=development", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  let stdout = "";
  child.stdout!.on("data", (d) => {
    output += d;
    stdout += d;
  });
  child.stderr!.on("data", (d) => (output += d));
  return {
    output: () => output,
    /** What the program printed on stdout (Node's warnings, e.g. DEP0123 for TLS to an IP, go to stderr). */
    stdout: () => stdout,
    until: (pattern: RegExp, timeoutMs: number) =>
      new Promise<void>((resolvePromise, reject) => {
        const deadline = Date.now() + timeoutMs;
        const timer = setInterval(() => {
          if (pattern.test(output)) {
            clearInterval(timer);
            resolvePromise();
          } else if (child.exitCode !== null || Date.now() > deadline) {
            clearInterval(timer);
            reject(new Error(`no ${pattern} (exit ${child.exitCode}):\n${output}`));
          }
        }, 50);
      }),
    exited: () =>
      new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once("exit", r))),
  };
}

beforeAll(async () => {
  await requireDocker();
  if (!existsSync(join(root, "agent/dist/cli/persys-agent.js"))) {
    throw new Error("agent/dist/cli/persys-agent.js is missing: run npm run build first (scripts/test.sh does)");
  }
  const [grpc, http, agentGrpc, agentMetrics] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  endpoint = `127.0.0.1:${grpc}`;
  // persys up serves TLS and writes a persysctl context with an admin certificate: the example and
  // this test's client find the cluster through it, as a user's programs do.
  const up = start(
    [
      "controlplane/src/cli/persys.ts",
      "up",
      ...["--data-dir", scratchDir("sdk-up-"), "--grpc", endpoint, "--http", `127.0.0.1:${http}`],
      ...["--agent-grpc", `127.0.0.1:${agentGrpc}`, "--agent-metrics", `127.0.0.1:${agentMetrics}`],
      ...["--node-id", nodeId],
    ],
    { PERSYS_CONFIG: clientConfig },
  );
  await up.until(/Persys single-node cluster is up/, 60_000);
  client = PersysClient.fromEnvironment({ env: { PERSYS_CONFIG: clientConfig } });
  // The local agent registers right after the banner.
  const deadline = Date.now() + 30_000;
  while (!(await client.nodes.list().toArray()).some((n) => n.id === nodeId)) {
    if (Date.now() > deadline) throw new Error(`node ${nodeId} never registered:\n${up.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 120_000);

afterAll(async () => {
  client?.close();
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 1_000));
  await cleanupDocker([nodeId]);
});

describe("the SDK against persys up with its real agent", () => {
  it("examples/sdk-app applies, waits until the container runs, explains and deletes it", async () => {
    const hostPort = await freePort();
    const workload = `hello-${id}`;
    const app = start(["examples/sdk-app/main.ts"], {
      PERSYS_CONFIG: clientConfig,
      EXAMPLE_ID: workload,
      EXAMPLE_HOST_PORT: String(hostPort),
    });
    const code = await app.exited();
    const lines = app.stdout().trimEnd().split("\n");
    expect(code, app.output()).toBe(0);
    expect(lines[0]).toBe(`created workload ${workload} at ${endpoint}`);
    expect(lines).toContain(`${workload} is running (1 ready) at 127.0.0.1:${hostPort}`);
    expect(lines).toContain(`  replica 0 running on ${nodeId}`);
    expect(lines.some((l) => l.startsWith(`    placed on ${nodeId}`))).toBe(true);
    expect(lines.at(-1)).toBe(`deleted workload ${workload}`);
    expect(await client.workloads.find(workload)).toBeUndefined();
  }, 180_000);

  it("reads a container's logs: all lines, the last N, then follows new ones", async () => {
    const workload = `logs-${id}`;
    await client.workloads.apply(
      container({
        id: workload,
        image: BUSYBOX_IMAGE,
        command: [
          "sh",
          "-c",
          "echo first; echo second; echo oops >&2; i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.3; done",
        ],
        cpuMillicores: 50,
        memoryMiB: 32,
      }),
    );
    await client.workloads.waitFor(workload, "running", { timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 1_000));

    const all: api.StreamWorkloadLogsResponse[] = [];
    for await (const line of client.workloads.logs(workload)) all.push(line);
    // Lines of one stream keep their order; stdout and stderr interleave by time.
    const stdout = all.filter((l) => l.stream === api.LogStream.LOG_STREAM_STDOUT).map((l) => l.line);
    const stderr = all.filter((l) => l.stream === api.LogStream.LOG_STREAM_STDERR).map((l) => l.line);
    expect(stdout.slice(0, 3)).toEqual(["first", "second", "tick-1"]);
    expect(stderr).toEqual(["oops"]);
    expect(all.every((l) => l.nodeId === nodeId && l.replicaIndex === 0)).toBe(true);

    const tail: string[] = [];
    for await (const line of client.workloads.logs(workload, { tailLines: 1 })) tail.push(line.line);
    expect(tail).toHaveLength(1);
    expect(tail[0]).toMatch(/^tick-\d+$/);

    const followed: string[] = [];
    for await (const line of client.workloads.logs(workload, { follow: true, tailLines: 0 })) {
      followed.push(line.line);
      if (followed.length === 3) break; // leaving the loop ends the stream
    }
    const ticks = followed.map((l) => Number(/^tick-(\d+)$/.exec(l)?.[1]));
    expect(ticks[0]).toBeGreaterThan(Number(tail[0]!.slice(5)));
    expect(ticks).toEqual([ticks[0], ticks[0]! + 1, ticks[0]! + 2]);

    await client.workloads.delete(workload);
    await client.workloads.waitFor(workload, "deleted", { timeoutMs: 60_000 });
  }, 120_000);
});
