import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { PersysError, SpecFileError } from "../index.js";
import type { CliIo } from "./cli-io.js";
import type { CliRun } from "./commands/command-kit.js";
import { commandTable } from "./commands/completion-command.js";
import { ExitCode, exitCodeFor } from "./exit-codes.js";
import { buildProgram, errorText, runCli } from "./program.js";

function fakeIo(): CliIo & { out: () => string; errText: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => (out += d));
  stderr.on("data", (d) => (err += d));
  return {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: {},
    now: () => new Date(),
    out: () => out,
    errText: () => err,
  };
}

const paths = [...commandTable(buildProgram({ io: fakeIo(), exitCode: 0, contexts: [] } as CliRun)).keys()].filter(
  Boolean,
);

describe("persysctl help", () => {
  it("has the verbs kubectl and Nomad users guess, and the Go persysctl's commands", () => {
    expect(paths).toEqual(
      expect.arrayContaining([
        "apply",
        "get",
        "describe",
        "delete",
        "start",
        "stop",
        "restart",
        "retry",
        "logs",
        "explain",
        "plan",
        "node cordon",
        "node drain",
        "node uncordon",
        "cluster status",
        "config use-context",
        "config get-contexts",
        "completion",
        "workload schedule",
        "workload list",
        "workload get",
        "workload delete",
        "workload retry",
        "workload start",
        "workload stop",
        "workload restart",
        "node list",
        "node get",
        "cluster list",
        "cluster get",
        "metrics",
      ]),
    );
  });

  it.each(paths)("%s --help shows usage and examples", async (path) => {
    const io = fakeIo();
    const code = await runCli([...path.split(" "), "--help"], io);
    expect(code).toBe(0);
    expect(io.out()).toContain(`Usage: persysctl ${path}`);
    expect(io.out()).toMatch(/Examples:\n {2}\S/);
  });
});

describe("errors and exit codes", () => {
  it.each([
    { name: "bad input", error: new PersysError("INVALID_SPEC", "x"), code: ExitCode.ERROR },
    { name: "not found", error: new PersysError("NOT_FOUND", "x"), code: ExitCode.ERROR },
    { name: "unreachable", error: new PersysError("UNAVAILABLE", "x"), code: ExitCode.UNREACHABLE },
    { name: "interrupted", error: new PersysError("CANCELLED", "x"), code: ExitCode.INTERRUPTED },
    { name: "a bug", error: new TypeError("x"), code: ExitCode.ERROR },
  ])("$name exits $code", ({ error, code }) => {
    expect(exitCodeFor(error)).toBe(code);
  });

  it("prints each spec-file problem on its own line", () => {
    const error = new SpecFileError([
      { file: "a.yaml", line: 3, column: 5, path: "container.image", reason: "is required", document: 0 },
    ]);
    expect(errorText(error, undefined)).toBe("error: spec file problem:\n  a.yaml:3:5: container.image: is required");
  });
});
