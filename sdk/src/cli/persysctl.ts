#!/usr/bin/env node
/**
 * `persysctl`: the operator's CLI of Persys Compute, built only on the public `@persys/sdk` API.
 * See docs/cli.md for the commands, output formats and exit codes.
 */
import { runCli } from "./program.js";

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`persysctl: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
