import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { type ComposeProject, composeError, PersysError, readCompose } from "@persys/schema";
import type { ProjectIdentity } from "./compose-labels.js";
import type { ComposeRuntimeSpec } from "./compose-runtime-spec.js";
import { GitCheckout } from "./git-checkout.js";

/** A stack's file, read and parsed, with where it lives and which commit it came from. */
export interface LoadedStack {
  readonly project: ComposeProject;
  readonly id: ProjectIdentity;
  /** Git sources: the commit checked out; inline: empty. */
  readonly commit: string;
}

/** Reads files relative to `base`, refusing paths that leave `root` (the checkout). */
function fileReader(root: string, base: string): (path: string) => string | undefined {
  return (path) => {
    const full = resolve(base, path);
    const rel = relative(root, full);
    if (rel.startsWith("..") || resolve(root, rel) !== full) return undefined;
    return existsSync(full) ? readFileSync(full, "utf8") : undefined;
  };
}

/**
 * Loads the compose file of a replica into `dir` (`<stateDir>/compose/<project>`): an inline file is
 * written to `dir/compose.yaml`; a git source is checked out in `dir/git` — fetched at its ref when
 * `fetch` (every apply), else the checkout already there is used (agent restart), fetched only when
 * there is none. Then parsed with the workload's env and profiles (`.env` and `env_file` next to
 * the file). Throws INVALID_SPEC with the file's field paths (under `compose.inlineYaml` or
 * `compose.git`) or NETWORK_ERROR when the repository cannot be fetched.
 */
export async function loadStack(spec: ComposeRuntimeSpec, dir: string, fetch: boolean): Promise<LoadedStack> {
  mkdirSync(dir, { recursive: true });
  if (spec.source.kind === "inline") {
    const file = join(dir, "compose.yaml");
    writeFileSync(file, spec.source.yaml);
    const result = readCompose({ file: "inline", content: spec.source.yaml, env: spec.env, profiles: spec.profiles });
    if (!result.ok) throw composeError("inline", result.violations, "compose.inlineYaml");
    return { project: result.project, id: { project: spec.project, workingDir: dir, configFile: file }, commit: "" };
  }
  const source = spec.source;
  const checkout = new GitCheckout(join(dir, "git"));
  let commit = fetch ? undefined : await checkout.current();
  commit ??= await checkout.update({ repo: source.repo, ref: source.ref });
  const root = realpathSync(checkout.dir);
  const file = resolve(root, source.path);
  if (relative(root, file).startsWith("..")) {
    throw new PersysError("INVALID_SPEC", `compose file path ${source.path} leaves the repository`, {
      details: [{ path: "compose.git.path", reason: "must stay inside the repository" }],
    });
  }
  if (!existsSync(file)) {
    throw new PersysError("INVALID_SPEC", `${source.path} does not exist in ${source.repo} at ${commit.slice(0, 12)}`, {
      details: [{ path: "compose.git.path", reason: `no file ${source.path} at commit ${commit.slice(0, 12)}` }],
    });
  }
  const base = dirname(file);
  const result = readCompose({
    file: source.path,
    content: readFileSync(file, "utf8"),
    env: spec.env,
    profiles: spec.profiles,
    projectDir: base,
    readFile: fileReader(root, base),
  });
  if (!result.ok)
    throw composeError(`${source.path} (${source.repo} at ${commit.slice(0, 12)})`, result.violations, "compose.git");
  return { project: result.project, id: { project: spec.project, workingDir: base, configFile: file }, commit };
}
