/** A `persys server` child process, as an operator runs it, for failover tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly grpcAddress: string;
  readonly httpUrl: string;
  readonly output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `persys server` with these flags (e.g. `{ "state-kind": "etcd" }`; `insecure` defaults to true) and waits until it listens. */
export async function startServerProcess(flags: Record<string, string>): Promise<ServerProcess> {
  // tsx as a loader in this very process (its CLI would fork a child that survives a SIGKILL).
  const args = [
    "--import",
    "tsx",
    "--conditions=development",
    resolve(root, "controlplane/src/cli/persys.ts"),
    "server",
    // Plaintext and anonymous-as-admin unless the test says otherwise (test/security does).
    ...Object.entries({ insecure: "true", ...flags }).flatMap(([k, v]) => [`--${k}`, v]),
  ];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const listening = await new Promise<RegExpMatchArray>((resolveListening, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 30 s:\n${output}`)), 30_000);
    const check = () => {
      const match = output.match(/listening: gRPC (\S+), HTTP (\S+)/);
      if (match) {
        clearTimeout(timer);
        resolveListening(match);
      }
    };
    child.stdout.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    grpcAddress: listening[1]!,
    httpUrl: listening[2]!,
    output: () => output,
    kill: async (signal = "SIGTERM") => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill(signal);
      await exited;
    },
  };
}
