import { PersysError, WaitError } from "../index.js";

/**
 * `persysctl` exit codes (documented in docs/cli.md):
 * - 0 — done;
 * - 1 — error: bad input (flags, spec files), an API error (NOT_FOUND, INVALID_SPEC, ...);
 * - 2 — the request was fine but the goal was not reached: `plan` found no node for a replica,
 *   `--wait` timed out or the workload failed;
 * - 3 — the control plane could not be reached (UNAVAILABLE after retries);
 * - 130 — interrupted (Ctrl-C).
 */
export const ExitCode = {
  OK: 0,
  ERROR: 1,
  NOT_REACHED: 2,
  UNREACHABLE: 3,
  INTERRUPTED: 130,
} as const;

/** One of {@link ExitCode}. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the CLI reports with a given exit code (and no stack). */
export class CliError extends Error {
  /** @param exitCode what the process exits with (default 1) */
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.ERROR,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** The exit code for anything a command threw. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof WaitError) return ExitCode.NOT_REACHED;
  if (error instanceof PersysError) {
    if (error.code === "CANCELLED") return ExitCode.INTERRUPTED;
    if (error.code === "UNAVAILABLE" || error.code === "DEADLINE_EXCEEDED") return ExitCode.UNREACHABLE;
  }
  return ExitCode.ERROR;
}
