/**
 * The real Pulumi CLI for tests: finds the binary scripts/build-pulumi-cli.sh cached, gives each
 * test a sandbox (PULUMI_HOME and a local file backend in a temp dir, passphrase secrets, no update
 * checks, no plugin downloads — the same environment as `persys_ensure_pulumi` in
 * scripts/lib/pulumi.sh), and runs `pulumi` commands in it.
 *
 * When the CLI is missing, {@link requirePulumiCli} throws with the command that builds it: these
 * tests fail loudly rather than skip.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { PulumiCommand } from "@pulumi/pulumi/automation/index.js";

export const repoRoot = resolve(import.meta.dirname, "../../..");

/** The pinned version, read from the wrapper module the CLI is built from. */
export const PULUMI_VERSION: string = (() => {
  const goMod = readFileSync(join(repoRoot, "provider/pulumi-build/go.mod"), "utf8");
  const match = /^\s*github\.com\/pulumi\/pulumi\/pkg\/v3 (v\S+)/m.exec(goMod);
  if (!match?.[1]) throw new Error("provider/pulumi-build/go.mod does not require github.com/pulumi/pulumi/pkg/v3");
  return match[1];
})();

export interface PulumiCli {
  /** Absolute path of the `pulumi` binary. */
  readonly bin: string;
  readonly version: string;
  /** For the Automation API: the same binary, version-checked. */
  readonly command: PulumiCommand;
}

function cacheCandidates(): string[] {
  // As persys_cache_dir in scripts/lib/pulumi.sh: PERSYS_CACHE_DIR alone when set.
  const roots = process.env.PERSYS_CACHE_DIR
    ? [process.env.PERSYS_CACHE_DIR]
    : ["/var/cache/persys", join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "persys")];
  const fromCache = roots.map((r) => join(r, "pulumi", PULUMI_VERSION, "bin", "pulumi"));
  const fromPath = (process.env.PATH ?? "").split(delimiter).map((d) => join(d, "pulumi"));
  return [...fromCache, ...fromPath];
}

function run(file: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(file, args, { env, timeout: 30_000 }, (err, stdout) => (err ? fail(err) : ok(stdout.trim()))),
  );
}

/**
 * The cached CLI of {@link PULUMI_VERSION}. Throws an error that says how to build it when no
 * candidate (the cache dirs of scripts/lib/pulumi.sh, then PATH) reports that version.
 */
export async function requirePulumiCli(): Promise<PulumiCli> {
  const tried: string[] = [];
  for (const bin of cacheCandidates()) {
    if (!existsSync(bin)) continue;
    const version = await run(bin, ["version"]).catch(() => "unrunnable");
    if (version !== PULUMI_VERSION) {
      tried.push(`${bin} (${version})`);
      continue;
    }
    const command = await PulumiCommand.get({ root: dirname(dirname(bin)) });
    return { bin, version, command };
  }
  throw new Error(
    `Pulumi CLI ${PULUMI_VERSION} not found${tried.length ? ` (wrong version: ${tried.join(", ")})` : ""}. ` +
      "Build it once (7-20 minutes cold on 2 cores, cached afterwards): scripts/build-pulumi-cli.sh " +
      "— or run the suite through scripts/test.sh, which calls persys_ensure_pulumi.",
  );
}

/** A temp dir with its own PULUMI_HOME and local backend; `env` is what every command gets. */
export interface PulumiSandbox {
  readonly dir: string;
  readonly env: Record<string, string>;
  cleanup(): void;
}

export const TEST_PASSPHRASE = "persys-test-passphrase";

export function createPulumiSandbox(cli: PulumiCli, extraEnv: Record<string, string> = {}): PulumiSandbox {
  const dir = mkdtempSync(join(tmpdir(), "persys-pulumi-"));
  mkdirSync(join(dir, "home"));
  mkdirSync(join(dir, "state"));
  const env: Record<string, string> = {
    PATH: `${dirname(cli.bin)}${delimiter}${process.env.PATH ?? ""}`,
    PULUMI_HOME: join(dir, "home"),
    PULUMI_BACKEND_URL: `file://${join(dir, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: TEST_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
    PULUMI_SKIP_CONFIRMATIONS: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
    ...extraEnv,
  };
  return { dir, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `pulumi <args>` in `cwd` with the sandbox environment (on top of this process's, so
 * PATH-like basics stay) and resolves with its output. Rejects on a non-zero exit unless
 * `allowFailure`, with both streams in the message.
 */
export function pulumi(
  cli: PulumiCli,
  sandbox: PulumiSandbox,
  args: string[],
  opts: { cwd: string; allowFailure?: boolean; timeoutMs?: number },
): Promise<CommandResult> {
  return new Promise((ok, fail) => {
    execFile(
      cli.bin,
      [...args, "--non-interactive"],
      {
        cwd: opts.cwd,
        env: { ...process.env, ...sandbox.env },
        timeout: opts.timeoutMs ?? 90_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        const result = { code, stdout, stderr };
        if (code !== 0 && !opts.allowFailure) {
          fail(new Error(`pulumi ${args.join(" ")} exited ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`));
        } else {
          ok(result);
        }
      },
    );
  });
}

/** Writes a Pulumi.yaml; `body` is appended verbatim (YAML) after name and runtime. */
export function writeProject(dir: string, name: string, body = ""): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n${body}`);
}
