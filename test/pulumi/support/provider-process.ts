/**
 * Starting a provider plugin the way the Pulumi engine does, for protocol-level tests: exec the
 * plugin's `pulumi-resource-<name>` launcher (the engine passes its own gRPC address as the first
 * argument; the Node.js provider server only uses it for logs and component construction, so tests
 * may leave it out), read the port from the first line of stdout, and connect a
 * `pulumirpc.ResourceProvider` client — the one generated into `@pulumi/pulumi/proto`, which also
 * carries the message classes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { ResourceProviderClient } from "@pulumi/pulumi/proto/provider_grpc_pb.js";
import { writePluginLauncher } from "../../../provider/src/plugin/plugin-launcher.js";
import { repoRoot } from "./pulumi-cli.js";

/** Node arguments that let a launcher run a TypeScript entry module (tsx from this workspace). */
export function tsxNodeArgs(): string[] {
  const loader = createRequire(join(repoRoot, "package.json")).resolve("tsx");
  return ["--import", pathToFileURL(loader).href];
}

/** Writes the probe provider's launcher into `dir` and returns the executable's path. */
export function writeProbePlugin(dir: string): string {
  return writePluginLauncher({
    dir,
    entry: join(repoRoot, "test/pulumi/fixtures/probe-plugin.ts"),
    nodeArgs: tsxNodeArgs(),
  });
}

export interface RunningPlugin {
  readonly port: number;
  readonly client: ResourceProviderClient;
  readonly child: ChildProcess;
  /** What the plugin wrote to stderr so far (for failure messages). */
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `executable` with `args` and connects once it has printed its port (within `timeoutMs`). */
export async function startPlugin(
  executable: string,
  opts: { args?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RunningPlugin> {
  const child = spawn(executable, opts.args ?? [], {
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const port = await new Promise<number>((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`no port within ${opts.timeoutMs ?? 20_000} ms; stderr:\n${stderr}`)),
      opts.timeoutMs ?? 20_000,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      clearTimeout(timer);
      const n = Number(line.trim());
      Number.isInteger(n) && n > 0
        ? ok(n)
        : fail(new Error(`first stdout line is not a port: ${JSON.stringify(line)}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`plugin exited (${code}) before printing its port; stderr:\n${stderr}`));
    });
  });
  const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    port,
    client,
    child,
    stderr: () => stderr,
    stop: async () => {
      client.close();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Calls a unary method of a grpc-js client as a promise. */
export function unary<Req, Res>(
  client: grpc.Client,
  method: (req: Req, cb: (err: grpc.ServiceError | null, res: Res) => void) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((ok, fail) => method.call(client, req, (err, res) => (err ? fail(err) : ok(res))));
}
