/** Where the CLI reads and writes; the real process streams, or fakes in tests. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The clock, for ages in tables (tests pin it). */
  readonly now: () => Date;
}

/** The process's streams and environment. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    now: () => new Date(),
  };
}

/** Text styles; each is the identity when colour is off. */
export interface Colours {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/**
 * Colour only on a terminal: off when stdout is not a TTY, when `NO_COLOR` is set (any value,
 * https://no-color.org), with `--no-color`, or for `TERM=dumb`; `FORCE_COLOR` (not `0`) turns it on.
 */
export function colours(io: CliIo, flag: boolean | undefined): Colours {
  const force = io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== "0";
  const enabled =
    flag !== false && (force || (io.stdout.isTTY === true && io.env.NO_COLOR === undefined && io.env.TERM !== "dumb"));
  const wrap = (open: number, close: number) => (text: string) =>
    enabled && text ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Removes ANSI colour codes (for width computations). */
export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape character is the point
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}
