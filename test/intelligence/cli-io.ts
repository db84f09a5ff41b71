/** An in-memory CliIo for running persysctl in-process against a real control plane. */
import { PassThrough } from "node:stream";
import type { CliIo } from "../../sdk/src/cli/cli-io.js";
import { runCli } from "../../sdk/src/cli/program.js";

/** Runs persysctl with `args`; returns its exit code and what it printed. */
export async function persysctlInProcess(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => (out += d));
  stderr.on("data", (d) => (err += d));
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {}, now: () => new Date() };
  const code = await runCli(args, io);
  return { code, out, err };
}
