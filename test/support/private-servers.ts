/**
 * Private instances of real servers for tests that must stop or restart them (so the shared servers
 * of the run stay untouched). Binaries come from the Debian packages the test command installs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { binary, runDir } from "./services.js";

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1");
    }).catch(() => false);
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

export interface PrivateServer {
  readonly port: number;
  readonly dataDir: string;
  /** Stops the server (SIGTERM, or SIGKILL when `hard`), waiting for the process to exit. */
  stop(options?: { hard?: boolean }): Promise<void>;
  /** Starts it again on the same port and data folder and waits until it accepts connections. */
  start(): Promise<void>;
}

function managed(port: number, dataDir: string, launch: () => ChildProcess): PrivateServer {
  let child: ChildProcess | undefined;
  const server: PrivateServer = {
    port,
    dataDir,
    async start() {
      child = launch();
      const spawned = child;
      const exited = new Promise<never>((_, reject) =>
        spawned.once("exit", (code) => reject(new Error(`server on port ${port} exited with ${code}`))),
      );
      exited.catch(() => {});
      await Promise.race([waitForPort(port), exited]);
    },
    async stop(options = {}) {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill(options.hard ? "SIGKILL" : "SIGTERM");
      await exited;
    },
  };
  return server;
}

function scratch(name: string): string {
  const dir = mkdtempSync(join(runDir(), `${name}-`));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A private redis-server on a free loopback port; `url` is its connection URL. */
export async function startPrivateRedis(): Promise<PrivateServer & { url: string }> {
  const bin = binary("redis-server", "redis-server");
  const port = await freePort();
  const dataDir = scratch("redis");
  const server = managed(port, dataDir, () =>
    spawn(bin, ["--bind", "127.0.0.1", "--port", String(port), "--dir", dataDir, "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    }),
  );
  await server.start();
  return Object.assign(server, { url: `redis://127.0.0.1:${port}` });
}

/** A private single-member etcd on free loopback ports; `endpoints` are its client URLs. */
export async function startPrivateEtcd(): Promise<PrivateServer & { endpoints: string[] }> {
  const bin = binary("etcd", "etcd-server");
  const port = await freePort();
  const peer = await freePort();
  const dataDir = scratch("etcd");
  const client = `http://127.0.0.1:${port}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const server = managed(port, dataDir, () =>
    spawn(
      bin,
      [
        "--name=private",
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=private=${peerUrl}`,
      ],
      { stdio: "ignore" },
    ),
  );
  await server.start();
  return Object.assign(server, { endpoints: [client] });
}
