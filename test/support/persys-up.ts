/**
 * `persys up` started from the sources as a person runs it, for the suites that test the whole
 * product through it (the agent's, the console's, the Pulumi end to end). Captures everything it
 * prints, waits for its banner and reads the banner's lines back.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "./free-port.js";

const root = resolve(import.meta.dirname, "../..");

/** The ports a test cluster's `persys up` listens on. */
export interface UpPorts {
  readonly grpc: number;
  readonly http: number;
  readonly agentGrpc: number;
  readonly agentMetrics: number;
}

/**
 * The `persys up` flags of a test cluster: its data dir, free loopback ports for the control plane
 * and the local agent, and its own node id (so its containers are told apart and cleaned up).
 */
export async function testClusterFlags(dataDir: string, nodeId: string): Promise<{ args: string[]; ports: UpPorts }> {
  const [grpc, http, agentGrpc, agentMetrics] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const args = ["--data-dir", dataDir, "--grpc", `127.0.0.1:${grpc}`, "--http", `127.0.0.1:${http}`];
  args.push(
    "--node-id",
    nodeId,
    "--agent-grpc",
    `127.0.0.1:${agentGrpc}`,
    "--agent-metrics",
    `127.0.0.1:${agentMetrics}`,
  );
  return { args, ports: { grpc, http, agentGrpc, agentMetrics } };
}

/** A running `persys up` process. */
export interface LaunchedPersysUp {
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** The value of a banner line (`  <label>:  <value>`); throws with the output when it is missing. */
  printed(label: string): string;
  /** Resolves with the exit code once it exited. */
  exited(): Promise<number | null>;
  /** Ctrl-C, then SIGKILL after 10 s. Idempotent. */
  stop(): Promise<void>;
}

export interface LaunchOptions {
  /** Arguments after `persys up`. */
  readonly args: readonly string[];
  /** Added to the environment (e.g. PERSYS_CONFIG: never the user's client config). */
  readonly env?: Readonly<Record<string, string>>;
  /** Built outputs it needs (checked first, e.g. `agent/dist/cli/persys-agent.js`). */
  readonly needs?: readonly string[];
  readonly bannerTimeoutMs?: number;
}

/** Starts `persys up` and resolves once it printed its banner (rejects with its output when it exits first). */
export async function launchPersysUp(options: LaunchOptions): Promise<LaunchedPersysUp> {
  for (const built of options.needs ?? []) {
    if (!existsSync(join(root, built)))
      throw new Error(`${built} is missing: run npm run build first (scripts/test.sh does)`);
  }
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--conditions=development",
      join(root, "controlplane/src/cli/persys.ts"),
      "up",
      ...options.args,
    ],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } },
  );
  // If the test process ends without stop() (a timed-out hook, Ctrl-C), Ctrl-C the cluster too.
  const onExit = () => child.kill("SIGINT");
  process.once("exit", onExit);
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exit = new Promise<number | null>((r) => {
    if (child.exitCode !== null) r(child.exitCode);
    else child.once("exit", (code) => r(code));
  });
  void exit.then(() => process.off("exit", onExit));
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exit;
      clearTimeout(timer);
    })();
    return stopping;
  };
  const deadline = Date.now() + (options.bannerTimeoutMs ?? 90_000);
  while (!output.includes("Persys single-node cluster is up")) {
    const ended = child.exitCode !== null || child.signalCode !== null;
    if (ended || Date.now() > deadline) {
      await stop();
      throw new Error(
        `persys up ${ended ? `exited (${child.exitCode ?? child.signalCode})` : "printed no banner"}:\n${output}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    output: () => output,
    printed: (label) => {
      const match = new RegExp(`^\\s*${label}:\\s+(\\S+)`, "m").exec(output);
      if (!match) throw new Error(`persys up printed no ${label}:\n${output}`);
      return match[1]!;
    },
    exited: () => exit,
    stop,
  };
}
