/**
 * Helpers for the compose suites: the project's containers by service, `docker-compose ps` (Debian's
 * docker-compose 1.29, reading the project by its labels), leftover networks and volumes, and a
 * local git repository served by `git daemon` on loopback.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { docker } from "../../agent/support/docker-fixtures.js";
import { freePort } from "../../support/free-port.js";
import { runDir } from "../../support/services.js";

const run = promisify(execFile);

/** A stack's containers (running or not) by service name, ordered by container number. */
export async function stackContainers(
  project: string,
): Promise<Record<string, { id: string; name: string; state: string }[]>> {
  const list = await docker.listContainers({
    all: true,
    filters: JSON.stringify({ label: [`com.docker.compose.project=${project}`] }),
  });
  const out: Record<string, { id: string; name: string; state: string }[]> = {};
  for (const c of list.sort(
    (a, b) =>
      Number(a.Labels["com.docker.compose.container-number"]) - Number(b.Labels["com.docker.compose.container-number"]),
  )) {
    const service = c.Labels["com.docker.compose.service"] ?? "?";
    const list = out[service] ?? [];
    list.push({ id: c.Id, name: c.Names[0]!.replace(/^\//, ""), state: c.State });
    out[service] = list;
  }
  return out;
}

/** `docker-compose -p PROJECT -f FILE ps` (docker-compose 1.29 needs the file to know the services). */
export async function composePs(project: string, file: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run("docker-compose", ["-p", project, "-f", file, "ps"], {
    env: { ...process.env, ...env, DOCKER_HOST: "unix:///var/run/docker.sock" },
  });
  return stdout;
}

export async function projectNetworks(project: string): Promise<string[]> {
  const list = await docker.listNetworks({
    filters: JSON.stringify({ label: [`com.docker.compose.project=${project}`] }),
  });
  return list.map((n) => n.Name);
}

export async function projectVolumes(project: string): Promise<string[]> {
  const list = await docker.listVolumes({
    filters: JSON.stringify({ label: [`com.docker.compose.project=${project}`] }),
  });
  return (list.Volumes ?? []).map((v) => v.Name);
}

/** Removes everything of these projects (containers, networks, volumes). Never throws. */
export async function cleanupProjects(projects: readonly string[]): Promise<void> {
  for (const project of projects) {
    const label = JSON.stringify({ label: [`com.docker.compose.project=${project}`] });
    for (const c of await docker.listContainers({ all: true, filters: label }).catch(() => [])) {
      await docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => {});
    }
    for (const n of await docker.listNetworks({ filters: label }).catch(() => [])) {
      await docker
        .getNetwork(n.Id)
        .remove()
        .catch(() => {});
    }
    const volumes = await docker.listVolumes({ filters: label }).catch(() => ({ Volumes: [] }));
    for (const v of volumes.Volumes ?? [])
      await docker
        .getVolume(v.Name)
        .remove()
        .catch(() => {});
  }
}

/** Writes a compose file for docker-compose to read; returns its path. */
export function writeComposeFile(yaml: string): string {
  const dir = mkdtempSync(join(runDir(), "compose-file-"));
  const file = join(dir, "compose.yaml");
  writeFileSync(file, yaml);
  return file;
}

/** A bare repository with a work tree to commit from, served read-only by `git daemon` on 127.0.0.1. */
export class GitServer {
  private constructor(
    readonly url: string,
    private readonly work: string,
    private readonly daemon: ChildProcess,
  ) {}

  static async start(name: string): Promise<GitServer> {
    const base = mkdtempSync(join(runDir(), "git-"));
    const bare = join(base, `${name}.git`);
    const work = join(base, "work");
    await run("git", ["init", "-q", "--bare", "-b", "main", bare]);
    mkdirSync(work);
    await run("git", ["init", "-q", "-b", "main", work]);
    await run("git", ["-C", work, "remote", "add", "origin", bare]);
    const port = await freePort();
    const daemon = spawn(
      "git",
      ["daemon", "--reuseaddr", "--export-all", `--base-path=${base}`, "--listen=127.0.0.1", `--port=${port}`],
      { stdio: "ignore" },
    );
    const server = new GitServer(`git://127.0.0.1:${port}/${name}.git`, work, daemon);
    for (let i = 0; i < 100; i++) {
      try {
        await run("git", ["ls-remote", server.url], { timeout: 2000 });
        return server;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    daemon.kill();
    throw new Error(`git daemon did not answer at ${server.url}`);
  }

  /** Commits these files on main and pushes (with the tag when given); returns the commit id. */
  async commit(files: Record<string, string>, message: string, tag?: string): Promise<string> {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(this.work, path)), { recursive: true });
      writeFileSync(join(this.work, path), text);
    }
    const git = (...args: string[]) => run("git", ["-C", this.work, ...args]);
    await git("add", "-A");
    await git("-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", message);
    if (tag) await git("tag", tag);
    await git("push", "-q", "origin", "main", ...(tag ? [tag] : []));
    return (await git("rev-parse", "HEAD")).stdout.trim();
  }

  stop(): void {
    this.daemon.kill();
  }
}
