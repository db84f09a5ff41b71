import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PersysError } from "@persys/schema";

/** Docker's default socket, the one `persys up` looks for. */
export const DOCKER_SOCKET = "/var/run/docker.sock";

/** Whether a Docker daemon answers `GET /_ping` on the unix socket within `timeoutMs`. Never throws. */
export function dockerAnswers(socketPath = DOCKER_SOCKET, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: "/_ping", method: "GET", timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

/**
 * The agent's command-line entry point, found by path (`agent/dist/cli/persys-agent.js` next to this
 * package) — never imported, so the control plane does not depend on the agent package.
 */
export function agentEntryPoint(): string {
  const path = fileURLToPath(new URL("../../../agent/dist/cli/persys-agent.js", import.meta.url));
  if (!existsSync(path)) {
    throw new PersysError("INVALID_CONFIG", `the node agent is not built (${path} is missing): run npm run build`);
  }
  return path;
}

/** The local node's default name: the host name, made a valid node id. */
export const defaultNodeId = (): string => hostname().replace(/[^A-Za-z0-9._-]/g, "-") || "local";

/** A node agent running as a child process of `persys up`. */
export interface LocalAgent {
  readonly nodeId: string;
  readonly endpoint: string;
  readonly child: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. Containers keep running. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts the local node agent (`node <agent>/dist/cli/persys-agent.js`) registered against the local
 * control plane, with its state under `<dataDir>/agent` and the node named after the host. It runs
 * in its own process group: Ctrl-C reaches `persys up`, which stops the agent, then the server.
 */
export function startLocalAgent(options: {
  readonly controlPlane: string;
  readonly dataDir: string;
  readonly listen?: string;
  readonly metrics?: string;
  readonly nodeId?: string;
  readonly dockerSocket?: string;
  /** Plaintext and no caller checks (the control plane runs `--insecure`). Otherwise the agent uses `<dataDir>/agent/tls`. */
  readonly insecure?: boolean;
  readonly onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
}): LocalAgent {
  const nodeId = options.nodeId ?? defaultNodeId();
  const listen = options.listen ?? "127.0.0.1:7071";
  const child = spawn(
    process.execPath,
    [
      agentEntryPoint(),
      "--node-id",
      nodeId,
      "--control-plane-endpoints",
      options.controlPlane,
      "--state-dir",
      join(options.dataDir, "agent"),
      "--listen-grpc",
      listen,
      "--listen-metrics",
      options.metrics ?? "127.0.0.1:7072",
      "--runtimes-docker-socket",
      options.dockerSocket ?? DOCKER_SOCKET,
      "--log-level",
      "warn",
      ...(options.insecure ? ["--insecure", "true"] : []),
    ],
    { stdio: ["ignore", "inherit", "inherit"], detached: true },
  );
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = true;
      options.onExit?.(code, signal);
      resolve();
    }),
  );
  return {
    nodeId,
    endpoint: listen,
    child,
    async stop(graceMs = 10_000) {
      if (exited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}
