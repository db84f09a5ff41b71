import type { Command } from "commander";
import { stringify } from "yaml";
import { type DiscoveredClientOptions, discoverClientOptions, PersysClient } from "../index.js";
import { type CliIo, type Colours, colours } from "./cli-io.js";
import { CliError } from "./exit-codes.js";

/** The global flags every command sees. */
export interface GlobalOptions {
  readonly endpoint?: string;
  readonly context?: string;
  readonly token?: string;
  readonly config?: string;
  readonly timeout?: string;
  /** `--no-color` sets it false. */
  readonly color?: boolean;
}

/** Output formats of commands that print objects. */
export type OutputFormat = "table" | "wide" | "json" | "yaml" | "name";

/**
 * `1500ms`, `30s`, `5m`, `1h`, or a bare number of seconds, in milliseconds.
 *
 * @throws CliError for anything else.
 */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new CliError(`${flag}: "${text}" is not a duration (e.g. 500ms, 30s, 5m, 1h)`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? "s") as "ms" | "s" | "m" | "h"];
  return Math.round(Number(match[1]) * factor);
}

/** The output format named by `-o`, checked against what the command supports. */
export function outputFormat<F extends OutputFormat>(value: string | undefined, allowed: readonly F[]): F {
  const format = (value ?? allowed[0] ?? "table") as F;
  if (!allowed.includes(format)) throw new CliError(`-o ${value}: use one of ${allowed.join(", ")}`);
  return format;
}

/** What a command needs: streams, colours, the global flags and a lazily made client. */
export class CliContext {
  private made: PersysClient | undefined;
  private found: DiscoveredClientOptions | undefined;

  /** @param command the command being run (for its options and the global ones) */
  constructor(
    readonly io: CliIo,
    private readonly command: Command,
  ) {}

  /** Global flags (merged with the command's own). */
  get globals(): GlobalOptions {
    return this.command.optsWithGlobals<GlobalOptions>();
  }

  /** Colour functions, enabled only on a terminal (see `colours`). */
  get c(): Colours {
    return colours(this.io, this.globals.color);
  }

  /** The discovered connection settings (flags > context > environment > config file > default). */
  discovery(): DiscoveredClientOptions {
    if (!this.found) {
      const g = this.globals;
      this.found = discoverClientOptions({
        env: this.io.env,
        configPath: g.config,
        context: g.context,
        overrides: {
          ...(g.endpoint ? { endpoint: g.endpoint } : {}),
          ...(g.token ? { token: g.token } : {}),
          ...(g.timeout ? { timeoutMs: parseDuration(g.timeout, "--timeout") } : {}),
        },
      });
    }
    return this.found;
  }

  /** The client, made on first use. */
  client(): PersysClient {
    this.made ??= new PersysClient(this.discovery().options);
    return this.made;
  }

  /** Writes to stdout. */
  out(text: string): void {
    this.io.stdout.write(text);
  }

  /** Writes a line to stderr. */
  err(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  /** The current time (from the IO, so tests can pin it). */
  now(): Date {
    return this.io.now();
  }

  /** Prints API objects (as their proto3 JSON) in JSON or YAML; several as a JSON array or YAML documents. */
  printObjects(objects: readonly unknown[], format: "json" | "yaml", single: boolean): void {
    if (format === "json") this.out(`${JSON.stringify(single ? objects[0] : objects, null, 2)}\n`);
    else this.out(objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n"));
  }

  /** Closes the client, if one was made. */
  close(): void {
    this.made?.close();
  }
}
