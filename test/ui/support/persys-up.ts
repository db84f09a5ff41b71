/**
 * `persys up` for the console's browser tests: the control plane with the embedded stores and the
 * local agent on this machine's Docker, started from the sources as a person would run it. Reads the
 * REST URL and, when the server prints one, the admin token from its banner.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { until } from "../../agent/support/agent-harness.js";
import { cleanupDocker, testId } from "../../agent/support/docker-fixtures.js";
import { httpsJson } from "../../security/support/https-json.js";
import { launchPersysUp, testClusterFlags } from "../../support/persys-up.js";
import { runDir } from "../../support/services.js";

/** A running `persys up`. */
export interface PersysUp {
  /** `http(s)://127.0.0.1:<port>` (no `/v1`). */
  readonly url: string;
  /** The admin token from the `token:` line, when the server printed one. */
  readonly token: string | undefined;
  readonly nodeId: string;
  readonly https: boolean;
  /** Everything it printed so far. */
  output(): string;
  /** REST call with the token; returns the status and the parsed body. */
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Ctrl-C, then SIGKILL after 10 s; removes the test's containers. Idempotent. */
  stop(): Promise<void>;
}

/** The REST URL and token printed in the banner (`  REST API:  <url>/v1 ...`, `  token:     <token>`). */
export function parseBanner(output: string): { url?: string; token?: string } {
  const url = /REST API:\s+(https?:\/\/\S+?)\/v1\b/.exec(output)?.[1];
  const token = /^\s*token:\s+(\S+)\s*$/m.exec(output)?.[1];
  return { ...(url ? { url } : {}), ...(token ? { token } : {}) };
}

/**
 * Starts `persys up` on free ports with a fresh data dir and waits for its banner and for the local
 * node to be ready. Needs agent/dist (the agent runs as a child process) and ui/dist (the console).
 * `--no-context` keeps it from writing a persysctl context into the home folder.
 */
export async function startPersysUp(options: { readonly extraArgs?: readonly string[] } = {}): Promise<PersysUp> {
  const nodeId = `ui-${testId()}`;
  const cluster = await testClusterFlags(mkdtempSync(join(runDir(), "ui-up-")), nodeId);
  const launched = await launchPersysUp({
    needs: ["agent/dist/cli/persys-agent.js", "ui/dist/index.html"],
    args: [
      ...cluster.args,
      "--no-context",
      ...(options.extraArgs ?? []),
      // Debugging knob: e.g. PERSYS_UI_UP_ARGS=--insecure runs the flows against a plaintext server.
      ...(process.env.PERSYS_UI_UP_ARGS?.split(" ").filter(Boolean) ?? []),
    ],
  }).catch(async (error: unknown) => {
    await cleanupDocker([nodeId]);
    throw error;
  });
  const output = () => launched.output();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= launched.stop().then(() => cleanupDocker([nodeId]));
    return stopping;
  };
  const { url, token } = parseBanner(output());
  if (!url) {
    await stop();
    throw new Error(`persys up printed no REST URL:\n${output()}`);
  }
  const https = url.startsWith("https:");
  const caFile = /^\s*CA:\s+(\S+)\s*$/m.exec(output())?.[1];
  const ca = https && caFile ? readFileSync(caFile, "utf8") : undefined;
  const rest = async (method: string, path: string, body?: unknown) => {
    if (ca)
      return httpsJson(method, `${url}${path}`, {
        ca,
        ...(token ? { token } : {}),
        ...(body === undefined ? {} : { body }),
      });
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };
  const up: PersysUp = { url, token, nodeId, https, output, rest, stop };
  try {
    await until(
      "the local node is ready",
      async () => (await rest("GET", `/v1/nodes/${nodeId}`)).body?.node?.state === "NODE_STATE_READY",
      60_000,
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output()}`);
  }
  return up;
}
