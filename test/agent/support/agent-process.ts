/** A `persys-agent` child process, as an operator runs it, for kill-and-restart tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

const root = resolve(import.meta.dirname, "../../..");

export interface AgentProcessOptions {
  /** Flags without dashes (`node-id`, ...). */
  readonly flags: Record<string, string>;
  /** Extra environment. */
  readonly env?: Record<string, string>;
  readonly startTimeoutMs?: number;
}

/**
 * Runs agent/src/cli/persys-agent.ts under tsx (as a loader in the child itself, so a SIGKILL kills
 * the agent and nothing survives it) and waits for its start line.
 */
export class AgentProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly endpoint: string,
    readonly metricsUrl: string,
    private readonly captured: () => string,
  ) {}

  static async start(options: AgentProcessOptions): Promise<AgentProcess> {
    const args = [
      "--import",
      "tsx",
      "--conditions=development",
      resolve(root, "agent/src/cli/persys-agent.ts"),
      ...Object.entries(options.flags).flatMap(([k, v]) => [`--${k}`, v]),
    ];
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...options.env },
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const started = await new Promise<RegExpMatchArray>((ok, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`agent did not start within ${options.startTimeoutMs ?? 30_000} ms:\n${output}`)),
        options.startTimeoutMs ?? 30_000,
      );
      const check = () => {
        const match = output.match(/AgentService (\S+), metrics (\S+),/);
        if (match) {
          clearTimeout(timer);
          ok(match);
        }
      };
      child.stdout.on("data", check);
      child.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`agent exited with ${code}:\n${output}`));
      });
    });
    return new AgentProcess(child, started[1]!, started[2]!, () => output);
  }

  /** Everything the agent wrote so far. */
  output(): string {
    return this.captured();
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends the signal and waits for the process to exit. */
  async kill(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.kill(signal);
    await exited;
  }
}
