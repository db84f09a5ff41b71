/**
 * An inline compose stack through the real control plane and a real agent on the real Docker
 * daemon: services come up in depends_on order (a healthcheck-gated database, a one-shot seed job,
 * a web server), `docker-compose ps` lists the project, per-service status reaches the API, an
 * update recreates only the changed service, and delete removes containers and networks but keeps
 * the named volume.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "../agent/support/agent-harness.js";
import { docker, httpText } from "../agent/support/docker-fixtures.js";
import { freePort } from "../support/free-port.js";
import {
  cleanupProjects,
  composePs,
  projectNetworks,
  projectVolumes,
  stackContainers,
  writeComposeFile,
} from "./support/compose-fixtures.js";

let h: DockerHarness | undefined;
const projects: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  await cleanupProjects(projects.splice(0));
});

const stackYaml = (greeting: string) => `
x-busybox: &busybox
  image: persys-test/busybox:1
services:
  db:
    <<: *busybox
    command: ["sh", "-c", "sleep 1; touch /tmp/ready; exec sleep 100000"]
    stop_grace_period: 1s
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 300ms
      timeout: 1s
      retries: 20
    volumes: ["data:/data"]
    deploy:
      resources:
        reservations: { cpus: "0.25", memory: 32m }
  seed:
    <<: *busybox
    command: sh -c "echo seeded > /data/seed"
    depends_on:
      db: { condition: service_healthy }
    volumes: ["data:/data"]
  web:
    image: persys-test/web:1
    environment:
      GREETING: ${greeting}
    ports: ["127.0.0.1:\${WEB_PORT}:8080"]
    stop_grace_period: 1s
    depends_on:
      db: { condition: service_healthy }
      seed: { condition: service_completed_successfully }
    deploy:
      resources:
        limits: { cpus: "0.5", memory: 64m }
volumes:
  data: {}
`;

const workload = (id: string, yaml: string, port: number) => ({
  id,
  kind: "WORKLOAD_KIND_COMPOSE",
  compose: { inlineYaml: yaml, env: { WEB_PORT: String(port) } },
});

const started = async (id: string) => new Date((await docker.getContainer(id).inspect()).State.StartedAt).getTime();

describe("an inline compose stack on a real agent", () => {
  it("comes up in dependency order, is listed by docker-compose, updates one service and goes down", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("node");
    const wid = `stack-${h.id}`;
    const project = `${wid}-0`;
    projects.push(project);
    const port = await freePort();

    const put = await h.rest("PUT", `/v1/workloads/${wid}`, workload(wid, stackYaml("one"), port));
    expect(put.status).toBe(201);
    // Resources default to the sum of the services: db reserves 250m/32 MiB, web is limited to 500m/64 MiB.
    expect(put.body.workload.resources).toMatchObject({ cpuMillicores: 750, memoryMib: 96 });

    const running = await until(
      "stack running",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_RUNNING" ? r : undefined;
      },
      60_000,
    );
    expect(running.nodeId).toBe(agent.nodeId);
    expect(running.services.map((s: any) => [s.name, s.state, s.desiredReplicas ?? 0])).toEqual([
      ["db", "REPLICA_STATE_RUNNING", 1],
      ["seed", "REPLICA_STATE_RUNNING", 1],
      ["web", "REPLICA_STATE_RUNNING", 1],
    ]);
    expect(await until("web answers", () => httpText(`http://127.0.0.1:${port}/`))).toBe("persys web ok\n");

    // Order: db can only be healthy 1 s after it started (it sleeps, then creates /tmp/ready), so seed
    // started at least 1 s after db; web started after seed had exited 0.
    const before = await stackContainers(project);
    expect(Object.keys(before).sort()).toEqual(["db", "seed", "web"]);
    const db = await docker.getContainer(before.db![0]!.id).inspect();
    const seed = await docker.getContainer(before.seed![0]!.id).inspect();
    expect(seed.State.ExitCode).toBe(0);
    expect(await started(before.seed![0]!.id)).toBeGreaterThanOrEqual(new Date(db.State.StartedAt).getTime() + 1000);
    expect(await started(before.web![0]!.id)).toBeGreaterThanOrEqual(new Date(seed.State.FinishedAt).getTime());
    expect(db.Config.Labels).toMatchObject({
      "com.docker.compose.project": project,
      "com.docker.compose.service": "db",
      "com.docker.compose.container-number": "1",
      "com.docker.compose.oneoff": "False",
      "persys.workload": wid,
      "persys.node": agent.nodeId,
    });
    expect(db.Name).toBe(`/${project}-db-1`);

    // docker-compose finds the project by its labels.
    const file = writeComposeFile(stackYaml("one"));
    const ps = await composePs(project, file, { WEB_PORT: String(port) });
    for (const service of ["db", "seed", "web"]) expect(ps).toContain(`${project}-${service}-1`);
    expect(ps).toMatch(new RegExp(`${project}-db-1 .*Up \\(healthy\\)`));

    // Changing one service recreates only that service.
    const updated = await h.rest("PUT", `/v1/workloads/${wid}`, workload(wid, stackYaml("two"), port));
    expect(updated.status).toBe(200);
    const revision = updated.body.workload.status.revision;
    await until(
      "update rolled out",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_RUNNING" && r.observedRevision.startsWith(revision);
      },
      60_000,
    );
    const after = await stackContainers(project);
    expect(after.db![0]!.id).toBe(before.db![0]!.id);
    expect(after.seed![0]!.id).toBe(before.seed![0]!.id);
    expect(after.web![0]!.id).not.toBe(before.web![0]!.id);
    expect((await docker.getContainer(after.web![0]!.id).inspect()).Config.Env).toContain("GREETING=two");
    expect(await until("web answers again", () => httpText(`http://127.0.0.1:${port}/`))).toBe("persys web ok\n");

    // Delete: containers and networks go, the named volume stays.
    expect(await projectNetworks(project)).toEqual([`${project}_default`]);
    expect((await h.rest("DELETE", `/v1/workloads/${wid}`)).status).toBeLessThan(300);
    await until("workload gone", async () => (await h!.rest("GET", `/v1/workloads/${wid}`)).status === 404, 30_000);
    await until("containers gone", async () => Object.keys(await stackContainers(project)).length === 0, 30_000);
    await until("networks gone", async () => (await projectNetworks(project)).length === 0);
    expect(await projectVolumes(project)).toEqual([`${project}_data`]);
  }, 120_000);

  it("scales a service without recreating its containers and removes a service dropped from the file", async () => {
    h = await startDockerHarness();
    await h.addAgent("node");
    const wid = `scale-${h.id}`;
    const project = `${wid}-0`;
    projects.push(project);
    const file = (replicas: number, withWorker: boolean) => `
services:
  app:
    image: persys-test/busybox:1
    stop_grace_period: 1s
    deploy: { replicas: ${replicas} }
${withWorker ? "  worker:\n    image: persys-test/busybox:1\n    stop_grace_period: 1s\n" : ""}`;
    const apply = async (replicas: number, withWorker: boolean) => {
      const body = { id: wid, kind: "WORKLOAD_KIND_COMPOSE", compose: { inlineYaml: file(replicas, withWorker) } };
      const put = await h!.rest("PUT", `/v1/workloads/${wid}`, body);
      expect(put.status).toBeLessThan(300);
      const revision = put.body.workload.status.revision;
      return until(
        `running at ${revision}`,
        async () => {
          const r = await h!.replica(wid);
          return r?.state === "REPLICA_STATE_RUNNING" && r.observedRevision.startsWith(revision) ? r : undefined;
        },
        60_000,
      );
    };
    await apply(2, true);
    const before = await stackContainers(project);
    expect(before.app!.map((c) => c.name)).toEqual([`${project}-app-1`, `${project}-app-2`]);
    expect(before.worker).toHaveLength(1);

    const scaled = await apply(3, false);
    expect(scaled.services.map((s: any) => [s.name, s.desiredReplicas, s.runningReplicas])).toEqual([["app", 3, 3]]);
    const after = await stackContainers(project);
    expect(after.app!.map((c) => c.name)).toEqual([`${project}-app-1`, `${project}-app-2`, `${project}-app-3`]);
    expect(after.app!.slice(0, 2).map((c) => c.id)).toEqual(before.app!.map((c) => c.id));
    expect(after.worker).toBeUndefined();
  }, 120_000);

  it("names the failing service in the replica's reason", async () => {
    h = await startDockerHarness();
    await h.addAgent("node");
    const wid = `broken-${h.id}`;
    projects.push(`${wid}-0`);
    const yaml = `
services:
  ok:
    image: persys-test/busybox:1
    stop_grace_period: 1s
  job:
    image: persys-test/busybox:1
    command: sh -c "exit 3"
`;
    expect(
      (
        await h.rest("PUT", `/v1/workloads/${wid}`, {
          id: wid,
          kind: "WORKLOAD_KIND_COMPOSE",
          compose: { inlineYaml: yaml },
        })
      ).status,
    ).toBe(201);
    const failed = await until(
      "replica failed",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_FAILED" ? r : undefined;
      },
      60_000,
    );
    expect(failed.reason).toMatchObject({ code: "CONTAINER_EXITED", message: expect.stringContaining("service job") });
    expect(failed.reason.message).toContain("exited with code 3");
    const job = failed.services.find((s: any) => s.name === "job");
    const ok = failed.services.find((s: any) => s.name === "ok");
    expect(job.state).toBe("REPLICA_STATE_FAILED");
    expect(ok).toMatchObject({ state: "REPLICA_STATE_RUNNING", runningReplicas: 1 });
  }, 90_000);
});
