import { type Command, Option } from "commander";
import { CliContext } from "../cli-context.js";
import type { CliIo } from "../cli-io.js";
import { CliError } from "../exit-codes.js";

/** What a command handler returns: an exit code, or nothing for 0. */
export type HandlerResult = number | undefined;

/** Shared state of one CLI run: the IO and the exit code the handler set. */
export interface CliRun {
  readonly io: CliIo;
  exitCode: number;
  /** Contexts made during the run, closed at the end. */
  readonly contexts: CliContext[];
}

/**
 * Wires a handler to a command: it gets a {@link CliContext}, the positional arguments and the
 * command's options; its result becomes the exit code.
 */
export function handle<O>(
  run: CliRun,
  command: Command,
  handler: (ctx: CliContext, args: string[], options: O) => Promise<HandlerResult> | HandlerResult,
): Command {
  return command.action(async (...received: unknown[]) => {
    const self = received[received.length - 1] as Command;
    const options = received[received.length - 2] as O;
    const args = received
      .slice(0, -2)
      .flatMap((a) => (Array.isArray(a) ? (a as string[]) : a === undefined ? [] : [String(a)]));
    const ctx = new CliContext(run.io, self);
    run.contexts.push(ctx);
    run.exitCode = (await handler(ctx, args, options)) ?? 0;
  });
}

/** Adds an "Examples:" section to a command's help. */
export function examples(command: Command, lines: readonly string[]): Command {
  return command.addHelpText("after", `\nExamples:\n${lines.map((l) => `  ${l}`).join("\n")}\n`);
}

/** `-o, --output <format>` with the formats the command supports. */
export function outputOption(formats: readonly string[]): Option {
  return new Option("-o, --output <format>", `output format: ${formats.join(", ")}`).choices(formats);
}

/** A non-negative integer flag value. */
export function parseCount(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new CliError(`${flag}: "${value}" is not a non-negative integer`);
    return Number(value);
  };
}

/** Collects a repeatable flag into a list. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The names accepted for each resource type (`get wl`, `get workload`, `get workloads`). */
export const resourceNames = {
  workloads: ["workloads", "workload", "wl", "w"],
  nodes: ["nodes", "node", "no"],
  events: ["events", "event", "ev"],
} as const;

/** The resource type a word names, or undefined. */
export function resourceOf(word: string | undefined): keyof typeof resourceNames | undefined {
  if (!word) return undefined;
  for (const [type, names] of Object.entries(resourceNames)) {
    if ((names as readonly string[]).includes(word.toLowerCase())) return type as keyof typeof resourceNames;
  }
  return undefined;
}
