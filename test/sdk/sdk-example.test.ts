/**
 * examples/sdk-app runs against a local control plane as `persys up` starts it (a child process on
 * embedded stores, plaintext) with a simulated node attached: it applies a container, waits until
 * running, prints the explanation and deletes it. `persys server` with `persys up`'s settings is used
 * because `persys up` also launches the real node agent when Docker answers, which needs agent/dist
 * and images on the machine; the simulated node keeps this test about the SDK.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { PersysClient } from "@persys/sdk";
import { afterAll, expect, it } from "vitest";
import type { SimulatedNode } from "../support/sim-agents/index.js";
import { attachSimNode, freePort, scratchDir, simNode } from "./sdk-cluster.js";

const root = resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
let node: SimulatedNode | undefined;

afterAll(async () => {
  await node?.close();
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
});

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=development", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  return {
    child,
    output: () => output,
    until: (pattern: RegExp, timeoutMs: number) =>
      new Promise<void>((resolvePromise, reject) => {
        const timer = setInterval(() => {
          if (pattern.test(output)) {
            clearInterval(timer);
            resolvePromise();
          } else if (child.exitCode !== null || Date.now() > deadline) {
            clearInterval(timer);
            reject(new Error(`no ${pattern} (exit ${child.exitCode}):\n${output}`));
          }
        }, 50);
        const deadline = Date.now() + timeoutMs;
      }),
    exited: () =>
      new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once("exit", r))),
  };
}

it("applies, waits, explains and deletes against a local control plane", async () => {
  const port = await freePort();
  const endpoint = `127.0.0.1:${port}`;
  const up = start([
    "controlplane/src/cli/persys.ts",
    "server",
    ...["--data-dir", scratchDir("up-"), "--listen-grpc", endpoint, "--listen-http", "127.0.0.1:0"],
    ...["--leader-ttl-seconds", "5", "--insecure", "true", "--log-level", "warn"],
  ]);
  await up.until(/listening: gRPC/, 60_000);
  const client = new PersysClient({ endpoint });
  node = await attachSimNode(endpoint, client, simNode("n1"));

  const app = start(["examples/sdk-app/main.ts"], { PERSYS_ENDPOINT: endpoint, PERSYS_CONFIG: "/nonexistent" });
  expect(await app.exited()).toBe(0);
  const lines = app.output().trimEnd().split("\n");
  expect(lines[0]).toBe(`created workload hello-web at ${endpoint}`);
  expect(lines).toContain("hello-web is running (1 ready) at 127.0.0.1:8080");
  expect(lines).toContain("  replica 0 running on n1");
  expect(lines.some((l) => /^ {4}placed on n1/.test(l))).toBe(true);
  expect(lines.at(-1)).toBe("deleted workload hello-web");
  expect(await client.workloads.find("hello-web")).toBeUndefined();
  client.close();
}, 180_000);
