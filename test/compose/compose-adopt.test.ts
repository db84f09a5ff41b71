/**
 * An agent killed with SIGKILL and started again on the same state dir adopts its compose stack:
 * the same containers keep running (never restarted or recreated), and GC leaves them alone.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "../agent/support/agent-harness.js";
import { docker } from "../agent/support/docker-fixtures.js";
import { runDir } from "../support/services.js";
import { cleanupProjects, stackContainers } from "./support/compose-fixtures.js";

let h: DockerHarness | undefined;
const projects: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  await cleanupProjects(projects.splice(0));
});

const yaml = `
services:
  db:
    image: persys-test/busybox:1
    stop_grace_period: 1s
    healthcheck: { test: ["CMD", "true"], interval: 500ms }
  app:
    image: persys-test/busybox:1
    stop_grace_period: 1s
    depends_on: { db: { condition: service_healthy } }
`;

describe("a restarted agent and its compose stack", () => {
  it("adopts the running containers after SIGKILL: same ids, same start times", async () => {
    h = await startDockerHarness();
    const stateDir = mkdtempSync(join(runDir(), "agent-compose-adopt-"));
    const flags = { "state-dir": stateDir, "gc-orphan-grace-seconds": "1" };
    const first = await h.spawnAgent("adopt", flags);
    const node = h.nodeId("adopt");
    const wid = `adopt-${h.id}`;
    const project = `${wid}-0`;
    projects.push(project);
    expect(
      (
        await h.rest("PUT", `/v1/workloads/${wid}`, {
          id: wid,
          kind: "WORKLOAD_KIND_COMPOSE",
          compose: { inlineYaml: yaml },
        })
      ).status,
    ).toBe(201);
    const running = async () => (await h!.replica(wid))?.state === "REPLICA_STATE_RUNNING";
    await until("stack running", running, 60_000);
    const before = await stackContainers(project);
    const startedAt = async (id: string) => (await docker.getContainer(id).inspect()).State.StartedAt;
    const starts = { db: await startedAt(before.db![0]!.id), app: await startedAt(before.app![0]!.id) };

    await first.kill("SIGKILL");
    await until(
      "node NotReady",
      async () => (await h!.rest("GET", `/v1/nodes/${node}`)).body.node.state === "NODE_STATE_NOT_READY",
      15_000,
    );
    await h.spawnAgent("adopt", flags);
    await until(
      "node Ready and the stack running again",
      async () =>
        (await h!.rest("GET", `/v1/nodes/${node}`)).body.node.state === "NODE_STATE_READY" && (await running()),
      30_000,
    );
    // Past the GC grace: nothing of the stack was taken for an orphan.
    await new Promise((r) => setTimeout(r, 2500));
    const after = await stackContainers(project);
    expect(after.db!.map((c) => c.id)).toEqual(before.db!.map((c) => c.id));
    expect(after.app!.map((c) => c.id)).toEqual(before.app!.map((c) => c.id));
    expect(await startedAt(after.db![0]!.id)).toBe(starts.db);
    expect(await startedAt(after.app![0]!.id)).toBe(starts.app);
  }, 120_000);
});
