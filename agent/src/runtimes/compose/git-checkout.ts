import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";

/** A git source as the agent fetches it. */
export interface GitRef {
  readonly repo: string;
  /** Branch, tag or commit; empty: the remote's default branch (HEAD). */
  readonly ref: string;
}

const GIT_TIMEOUT_MS = 120_000;

function git(args: readonly string[], cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      [...args],
      {
        ...(cwd ? { cwd } : {}),
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
        // Never prompt for credentials, never read the agent user's git config for auth helpers.
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "/bin/false", LC_ALL: "C" },
      },
      (error, stdout, stderr) => {
        if (error) reject(Object.assign(error, { stderr: String(stderr).trim() }));
        else resolve(String(stdout).trim());
      },
    );
  });
}

const stderrOf = (error: unknown) => (error as { stderr?: string }).stderr || (error as Error).message;

/**
 * A working copy of one git source under the agent's state dir, moved to a ref with the `git` CLI:
 * `init` once, then `fetch` of branches and tags from the repository, the ref resolved (remote
 * branch, then tag, then commit id), a detached forced checkout and `clean -fdx`, so the tree is
 * exactly the commit. Fetching again picks up a moved branch. Not safe for concurrent use of one
 * directory (the replica's queue serialises it).
 */
export class GitCheckout {
  constructor(readonly dir: string) {}

  /** Fetches and checks out `source.ref`; returns the commit id now checked out. */
  async update(source: GitRef): Promise<string> {
    if (!existsSync(join(this.dir, ".git"))) {
      mkdirSync(this.dir, { recursive: true });
      await git(["init", "-q", this.dir]);
    }
    await git(["config", "remote.origin.url", source.repo], this.dir);
    try {
      await git(
        [
          "fetch",
          "--quiet",
          "--force",
          "--prune",
          "--no-recurse-submodules",
          "origin",
          "+refs/heads/*:refs/remotes/origin/*",
          "+refs/tags/*:refs/tags/*",
          "+HEAD:refs/remotes/origin/HEAD",
        ],
        this.dir,
      );
    } catch (error) {
      throw new PersysError("NETWORK_ERROR", `cannot fetch ${source.repo}: ${stderrOf(error)}`, {
        retryable: true,
        cause: error,
      });
    }
    const commit = await this.resolve(source);
    await git(["-c", "advice.detachedHead=false", "checkout", "-q", "--force", commit], this.dir);
    await git(["clean", "-q", "-fdx"], this.dir);
    return commit;
  }

  /** The commit checked out now, or undefined when there is no checkout yet. */
  async current(): Promise<string | undefined> {
    if (!existsSync(join(this.dir, ".git"))) return undefined;
    try {
      return await git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], this.dir);
    } catch {
      return undefined;
    }
  }

  private async resolve(source: GitRef): Promise<string> {
    const ref = source.ref || "HEAD";
    const candidates = [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref];
    for (const candidate of candidates) {
      try {
        return await git(["rev-parse", "--verify", "-q", `${candidate}^{commit}`], this.dir);
      } catch {
        // try the next form
      }
    }
    throw new PersysError("INVALID_SPEC", `git ref "${ref}" is not a branch, tag or commit of ${source.repo}`, {
      details: [{ path: "compose.git.ref", reason: `no branch, tag or commit "${ref}" in ${source.repo}` }],
    });
  }
}
