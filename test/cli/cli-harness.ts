/**
 * Runs `persysctl` as a user does: the built binary (`node sdk/dist/cli/persysctl.js`, built once
 * with `tsc -b sdk`), reading stdout, stderr and the exit code. Golden files pin table views, with
 * ages, times and column padding normalised.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect } from "vitest";

const root = resolve(import.meta.dirname, "../..");
/** The built CLI entry. */
export const persysctlPath = join(root, "sdk", "dist", "cli", "persysctl.js");

/** Builds the SDK (and schema) with `tsc -b sdk`, once per run, serialised by a lock folder across test files. */
export async function buildCli(): Promise<void> {
  const lock = join(root, "sdk", "dist", ".build-lock");
  mkdirSync(join(root, "sdk", "dist"), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b", "sdk"], { cwd: root, stdio: "pipe" });
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`tsc -b sdk failed:\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  if (!existsSync(persysctlPath)) throw new Error(`${persysctlPath} was not built`);
}

/** What one run printed and how it ended. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link persysctl}. */
export interface CliOptions {
  /** Environment on top of a clean one (PATH and HOME kept; PERSYS_* and colour variables dropped). */
  readonly env?: Record<string, string>;
  readonly stdin?: string;
  readonly timeoutMs?: number;
}

/** The child's environment: no PERSYS_* from the test runner, no colour forcing, a private HOME. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "TMPDIR", "LANG"]) if (process.env[key]) env[key] = process.env[key]!;
  env.HOME = join(process.env.PERSYS_TEST_RUN_DIR ?? "/tmp", "cli-home");
  return { ...env, ...extra };
}

/** Runs `persysctl args...` to completion. */
export function persysctl(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [persysctlPath, ...args], {
    cwd: root,
    env: cliEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  return collect(child, options);
}

function collect(child: ChildProcess, options: CliOptions): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  child.stdin!.end(options.stdin ?? "");
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `persysctl did not finish within ${options.timeoutMs ?? 60_000} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolvePromise({ code, stdout, stderr }));
    });
  });
}

/** A long-running `persysctl` (e.g. `--watch`), read as it prints, stopped with SIGINT. */
export function persysctlLive(args: readonly string[], options: CliOptions = {}) {
  const child = spawn(process.execPath, [persysctlPath, ...args], {
    cwd: root,
    env: cliEnv(options.env),
    stdio: "pipe",
  });
  let stdout = "";
  child.stdout.on("data", (d) => (stdout += d));
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return {
    output: () => stdout,
    errors: () => stderr,
    async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in output:\n${stdout}\nstderr:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop(): Promise<number | null> {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((r) =>
        child.once("exit", (code, signal) => r(code ?? (signal ? 130 : null))),
      );
      child.kill("SIGINT");
      return exited;
    },
  };
}

/**
 * Makes output comparable across runs: ages (`12s`, `3m`) → `<age>`, durations (`after 1.2s`) →
 * `<duration>`, ISO times → `<time>`, `127.0.0.1:<port>` of the control plane → `<endpoint>`,
 * leader ids → `<leader>`, and runs of 2+ spaces after text (column padding) → 3 spaces; indentation stays.
 */
export function normalise(text: string, endpoint?: string): string {
  let out = text;
  if (endpoint) out = out.replaceAll(endpoint, "<endpoint>");
  return out
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/\b\d+(\.\d+)?s\b(?= ago|\)|$)/gm, "<age>")
    .replace(/after \d+(\.\d+)?s/g, "after <duration>")
    .replace(/(?<=\s|^)\d+[smhd](?=\s|$)/gm, "<age>")
    .replace(/(Leader:\s+)\S+/g, "$1<leader>")
    .replace(/(?<=\S) {2,}/g, "   ")
    .replace(/ +$/gm, "");
}

/** Compares with `test/cli/golden/<name>.txt`; `UPDATE_GOLDEN=1` rewrites the file instead. */
export function expectGolden(name: string, actual: string): void {
  const path = join(import.meta.dirname, "golden", `${name}.txt`);
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(path)) {
    mkdirSync(join(import.meta.dirname, "golden"), { recursive: true });
    writeFileSync(path, actual);
    if (process.env.UPDATE_GOLDEN !== "1")
      throw new Error(`golden file ${name}.txt was missing and has been written; check it in`);
    return;
  }
  expect(actual).toBe(readFileSync(path, "utf8"));
}
