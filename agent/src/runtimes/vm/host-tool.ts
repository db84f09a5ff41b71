/**
 * Runs the host programs the VM runtime needs (genisoimage, qemu-img, qemu-system-x86_64, virsh) as
 * subprocesses without a shell, with a deadline, and turns "not installed" into a typed error.
 *
 * ```ts
 * const tool = await findHostTool(["genisoimage", "xorriso"], "genisoimage");
 * const { stdout } = await runHostTool(tool, ["-version"], { timeoutMs: 5_000 });
 * ```
 */
import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { PersysError } from "@persys/schema";

/** A program found on this host. */
export interface HostTool {
  /** The name it was looked up by, e.g. `genisoimage`. */
  readonly name: string;
  /** Its absolute path. */
  readonly path: string;
}

/** What a finished run printed. */
export interface HostToolOutput {
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunHostToolOptions {
  /** Kill the program (SIGKILL) after this long and fail with DEADLINE_EXCEEDED. Default 60 s. */
  readonly timeoutMs?: number;
  /** Working directory. */
  readonly cwd?: string;
  /** Written to the program's stdin, which is then closed. */
  readonly input?: string;
  /** Extra environment, merged over this process's. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Longest stdout/stderr kept from one run; the tail of a chatty program is what explains it. */
const outputLimit = 1 << 20;

/**
 * The first of `names` found as an executable file on `PATH` (or given as an absolute path).
 * Throws RUNTIME_UNAVAILABLE naming the Debian package to install when none is.
 */
export async function findHostTool(
  names: readonly string[],
  debianPackage: string,
  searchPath: string = process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
): Promise<HostTool> {
  const dirs = searchPath.split(delimiter).filter(Boolean);
  for (const name of names) {
    const candidates = isAbsolute(name) ? [name] : dirs.map((dir) => join(dir, name));
    for (const path of candidates) {
      if (await isExecutable(path)) return { name, path };
    }
  }
  throw new PersysError(
    "RUNTIME_UNAVAILABLE",
    `${names.join(" or ")} is not installed on this node; install the Debian package ${debianPackage}`,
    { retryable: false },
  );
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `tool` with `args` and resolves with its output when it exits 0. A non-zero exit becomes
 * RUNTIME_ERROR with the tail of stderr; a deadline becomes DEADLINE_EXCEEDED; a program that
 * vanished since it was found becomes RUNTIME_UNAVAILABLE.
 */
export function runHostTool(
  tool: HostTool,
  args: readonly string[],
  options: RunHostToolOptions = {},
): Promise<HostToolOutput> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(tool.path, args, {
      cwd: options.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const keep = (buffer: string, chunk: Buffer) => (buffer + chunk.toString("utf8")).slice(-outputLimit);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout = keep(stdout, chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = keep(stderr, chunk);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (error.code === "ENOENT" || error.code === "EACCES") {
        reject(new PersysError("RUNTIME_UNAVAILABLE", `${tool.name} cannot be run (${tool.path}: ${error.code})`));
      } else
        reject(new PersysError("RUNTIME_ERROR", `${tool.name} failed to start: ${error.message}`, { cause: error }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(new PersysError("DEADLINE_EXCEEDED", `${tool.name} did not finish within ${timeoutMs} ms`));
      } else if (code === 0) resolve({ stdout, stderr });
      else {
        const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
        reject(new PersysError("RUNTIME_ERROR", `${tool.name} ${how}: ${lastLines(stderr || stdout, 8)}`));
      }
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** The last `count` non-empty lines of a program's output, joined with " | ". */
export function lastLines(text: string, count: number): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.slice(-count).join(" | ") || "(no output)";
}
