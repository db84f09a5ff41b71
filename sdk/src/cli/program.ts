import { Command, CommanderError } from "commander";
import { PersysError, SDK_VERSION, SpecFileError } from "../index.js";
import { type CliIo, colours, processIo } from "./cli-io.js";
import { applyCommand, planCommand } from "./commands/apply-command.js";
import { type CliRun, examples, handle } from "./commands/command-kit.js";
import { completionCommand } from "./commands/completion-command.js";
import { configCommand } from "./commands/config-command.js";
import { getCommand } from "./commands/get-command.js";
import { workloadAliases } from "./commands/go-aliases.js";
import { intelligenceCommands } from "./commands/intelligence-commands.js";
import { clusterCommand, metricsCommand, nodeCommand } from "./commands/node-cluster-commands.js";
import { policyCommand } from "./commands/policy-commands.js";
import { secretCommand } from "./commands/secret-commands.js";
import { joinTokenCommand, tokenCommand, userCommand, whoamiCommand } from "./commands/security-commands.js";
import {
  deleteCommand,
  describeCommand,
  explainCommand,
  lifecycleCommands,
  logsCommand,
  moveCommand,
} from "./commands/workload-commands.js";
import { ExitCode, exitCodeFor } from "./exit-codes.js";

/** The whole `persysctl` command tree, writing to `run.io`. */
export function buildProgram(run: CliRun): Command {
  const program = new Command("persysctl")
    .description("Operate a Persys Compute cluster: workloads (containers, Compose stacks, VMs), nodes, events.")
    .version(SDK_VERSION, "--version", "print the persysctl version")
    .option("--endpoint <host:port>", "control plane gRPC endpoint (env PERSYS_ENDPOINT; default 127.0.0.1:7070)")
    .option("--context <name>", "context of the client config to use (env PERSYS_CONTEXT)")
    .option("--token <token>", "bearer token (env PERSYS_TOKEN)")
    .option("--config <path>", "client config file (env PERSYS_CONFIG; default ~/.persys/config.yaml)")
    .option("--timeout <duration>", "time budget of each API call, e.g. 10s (default 30s)")
    .option("--no-color", "never colour the output (also: NO_COLOR, or not a terminal)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => run.io.stdout.write(text),
      writeErr: (text) => run.io.stderr.write(text),
    });
  examples(program, [
    "persysctl apply -f web.yaml --wait",
    "persysctl get workloads",
    "persysctl describe workload web",
    "persysctl explain web",
    "persysctl plan -f big.yaml",
    "persysctl logs web -f",
    "persysctl node drain n1",
    'persysctl ask "why is web pending?"',
    "persysctl --context prod cluster status",
  ]);
  program.addHelpText(
    "after",
    "\nExit codes: 0 ok, 1 error or bad input, 2 not placeable / wait timed out or failed, 3 control plane unreachable.\n",
  );
  const commands = [
    applyCommand(run),
    getCommand(run),
    describeCommand(run),
    deleteCommand(run),
    ...lifecycleCommands(run),
    moveCommand(run),
    logsCommand(run),
    explainCommand(run),
    planCommand(run),
    nodeCommand(run).addCommand(joinTokenCommand(run)),
    clusterCommand(run),
    configCommand(run),
    completionCommand(run, () => program),
    workloadAliases(run),
    metricsCommand(run),
    ...intelligenceCommands(run),
    policyCommand(run),
    secretCommand(run),
    whoamiCommand(run),
    tokenCommand(run),
    userCommand(run),
  ];
  const version = new Command("version").description("print the client and server versions");
  examples(version, ["persysctl version", "persysctl --version   # the client only, without a call"]);
  handle(run, version, async (ctx) => {
    ctx.out(`Client: persysctl ${SDK_VERSION}\n`);
    const summary = await ctx.client().cluster.summary();
    ctx.out(`Server: persys ${summary.version} at ${ctx.discovery().endpoint}\n`);
    return 0;
  });
  commands.push(version);
  for (const command of commands) {
    command.exitOverride().configureOutput({
      writeOut: (text) => run.io.stdout.write(text),
      writeErr: (text) => run.io.stderr.write(text),
    });
    for (const sub of command.commands) {
      sub.exitOverride().configureOutput({
        writeOut: (text) => run.io.stdout.write(text),
        writeErr: (text) => run.io.stderr.write(text),
      });
    }
    program.addCommand(command);
  }
  return program;
}

/** The message persysctl prints for a failure (one line, or one line per spec-file problem). */
export function errorText(error: unknown, endpoint: string | undefined): string {
  if (error instanceof SpecFileError) {
    return `error: ${error.problems.length === 1 ? "spec file problem" : `${error.problems.length} spec file problems`}:\n${error.message
      .split("\n")
      .map((l) => `  ${l}`)
      .join("\n")}`;
  }
  if (error instanceof PersysError) {
    const hint =
      error.code === "UNAVAILABLE" || error.code === "DEADLINE_EXCEEDED"
        ? "\nhint: is the control plane running there? Set --endpoint, PERSYS_ENDPOINT or a context (persysctl config get-contexts)."
        : "";
    if (hint) {
      const cause = /Last error: (?:Error: )?(.+?)(?:\. Resolution note|$)/.exec(error.message)?.[1]?.trim();
      const where = endpoint ? ` at ${endpoint}` : "";
      return `error: cannot reach the control plane${where}${cause ? ` (${cause})` : `: ${error.message}`} (${error.code})${hint}`;
    }
    return `error: ${error.message} (${error.code})`;
  }
  if (error instanceof Error) return `error: ${error.message}`;
  return `error: ${String(error)}`;
}

/** Runs persysctl with `argv` (without the node and script paths) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const run: CliRun = { io, exitCode: 0, contexts: [] };
  const program = buildProgram(run);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return run.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version"
        ? ExitCode.OK
        : ExitCode.ERROR;
    }
    let endpoint: string | undefined;
    try {
      endpoint = run.contexts[0]?.discovery().endpoint;
    } catch {}
    const c = colours({ ...io, stdout: io.stderr }, undefined);
    io.stderr.write(`${c.red(errorText(error, endpoint))}\n`);
    return exitCodeFor(error);
  } finally {
    for (const ctx of run.contexts) ctx.close();
  }
}
