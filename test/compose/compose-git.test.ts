/**
 * A git-sourced compose stack: a local bare repository served by `git daemon` on 127.0.0.1; the
 * stack deploys at a tag, then at a new commit of the branch; a moved branch is picked up by a
 * refresh; the resolved commit is in the replica's status; `.env` next to the file is read.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "../agent/support/agent-harness.js";
import { docker } from "../agent/support/docker-fixtures.js";
import { cleanupProjects, GitServer, stackContainers } from "./support/compose-fixtures.js";

let h: DockerHarness | undefined;
let git: GitServer | undefined;
const projects: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  git?.stop();
  git = undefined;
  await cleanupProjects(projects.splice(0));
});

const file = (version: string) => `
services:
  app:
    image: persys-test/busybox:1
    environment:
      VERSION: "${version}"
      FROM_DOTENV: \${FROM_DOTENV}
    stop_grace_period: 1s
  sidecar:
    image: persys-test/busybox:1
    stop_grace_period: 1s
`;

const spec = (id: string, url: string, ref: string, refreshToken = "") => ({
  id,
  kind: "WORKLOAD_KIND_COMPOSE",
  compose: { git: { repo: url, ref, path: "deploy/compose.yaml", refreshToken } },
});

describe("a compose stack from git", () => {
  it("deploys at a tag, then at a new commit, and picks up a moved branch on refresh", async () => {
    git = await GitServer.start("stack");
    await git.commit({ README: "a stack" }, "root");
    const tagged = await git.commit(
      { "deploy/compose.yaml": file("1"), "deploy/.env": "FROM_DOTENV=dotenv-value\n" },
      "version 1",
      "v1",
    );

    h = await startDockerHarness();
    await h.addAgent("node");
    const wid = `gitstack-${h.id}`;
    const project = `${wid}-0`;
    projects.push(project);

    const waitFor = async (commit: string) =>
      until(
        `stack running at ${commit.slice(0, 8)}`,
        async () => {
          const r = await h!.replica(wid);
          return r?.state === "REPLICA_STATE_RUNNING" && r.sourceCommit === commit ? r : undefined;
        },
        60_000,
      );
    const envOf = async (service: string) => {
      const c = (await stackContainers(project))[service]![0]!;
      return { id: c.id, env: (await docker.getContainer(c.id).inspect()).Config.Env };
    };

    expect((await h.rest("PUT", `/v1/workloads/${wid}`, spec(wid, git.url, "v1"))).status).toBe(201);
    const atTag = await waitFor(tagged);
    expect(atTag.services.map((s: any) => s.name)).toEqual(["app", "sidecar"]);
    const first = await envOf("app");
    expect(first.env).toEqual(expect.arrayContaining(["VERSION=1", "FROM_DOTENV=dotenv-value"]));
    const sidecar = await envOf("sidecar");

    // A new commit on main; the workload moves to the branch.
    const second = await git.commit({ "deploy/compose.yaml": file("2") }, "version 2");
    expect((await h.rest("PUT", `/v1/workloads/${wid}`, spec(wid, git.url, "main"))).status).toBe(200);
    await waitFor(second);
    const app2 = await envOf("app");
    expect(app2.env).toContain("VERSION=2");
    expect(app2.id).not.toBe(first.id);
    expect((await envOf("sidecar")).id).toBe(sidecar.id);

    // The branch moves again: a refresh (new refresh token) fetches it.
    const third = await git.commit({ "deploy/compose.yaml": file("3") }, "version 3");
    expect((await h.rest("PUT", `/v1/workloads/${wid}`, spec(wid, git.url, "main", "refresh-1"))).status).toBe(200);
    await waitFor(third);
    expect((await envOf("app")).env).toContain("VERSION=3");
    expect((await envOf("sidecar")).id).toBe(sidecar.id);
  }, 120_000);

  it("fails with a typed reason when the ref does not exist", async () => {
    git = await GitServer.start("refs");
    await git.commit({ "compose.yaml": file("1") }, "one");
    h = await startDockerHarness();
    await h.addAgent("node");
    const wid = `badref-${h.id}`;
    projects.push(`${wid}-0`);
    const put = await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_COMPOSE",
      compose: { git: { repo: git.url, ref: "no-such-tag" } },
    });
    expect(put.status).toBe(201);
    const failed = await until(
      "replica failed",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_FAILED" ? r : undefined;
      },
      30_000,
    );
    expect(failed.reason).toMatchObject({ code: "INVALID_SPEC", message: expect.stringContaining('"no-such-tag"') });
  }, 60_000);
});
