/**
 * How container failures look to a user of the API, on the real Docker daemon: a missing image and a
 * taken host port fail with their typed reason and are not retried blindly; a container killed
 * outside Persys is restarted by its policy and the event log says so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import { BUSYBOX_IMAGE, docker, holdPort, httpText, WEB_IMAGE, workloadContainers } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h?.close();
  h = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const container = (id: string, spec: Record<string, unknown>) => ({
  id,
  kind: "WORKLOAD_KIND_CONTAINER",
  resources: { cpuMillicores: 100, memoryMib: 64 },
  container: { image: WEB_IMAGE, stopTimeoutSeconds: 1, ...spec },
});

describe("container failures through the API", () => {
  it("reports a missing image as IMAGE_NOT_FOUND with the registry's text, and does not retry it", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("img");
    const wid = `noimg-${h.id}`;
    const image = `persys-test/does-not-exist-${h.id}:1`;
    await h.rest("PUT", `/v1/workloads/${wid}`, container(wid, { image }));
    const failed = await until("replica failed", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_FAILED" ? r : undefined;
    });
    expect(failed.reason.code).toBe("IMAGE_NOT_FOUND");
    expect(failed.reason.message).toContain(`image ${image} is not on this node and no registry has it`);
    expect(failed.reason.message).toMatch(/registry|no such host|not found/i);
    expect(failed.reason.retryable ?? false).toBe(false);

    const applies = agent.actions.count("apply", `${wid}-0`);
    const pulls = agent.runtime.pullAttempts;
    expect(applies).toBe(1);
    expect(pulls).toBe(1);
    await sleep(4_000);
    expect(agent.actions.count("apply", `${wid}-0`)).toBe(applies);
    expect(agent.runtime.pullAttempts).toBe(pulls);
    expect(await workloadContainers(agent.nodeId, wid)).toEqual([]);
    const metrics = await (await fetch(`${agent.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/persys_agent_image_pulls_total\{result="not_found",node="[^"]+"\} 1/);
  });

  it("reports a host port held by another process as PORT_CONFLICT naming the port, without retrying", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("port");
    const held = await holdPort();
    cleanups.push(() => new Promise<void>((r) => held.server.close(() => r())));
    const wid = `pc-${h.id}`;
    await h.rest(
      "PUT",
      `/v1/workloads/${wid}`,
      container(wid, { ports: [{ containerPort: 8080, hostPort: held.port }] }),
    );
    const failed = await until("replica failed", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_FAILED" ? r : undefined;
    });
    expect(failed.reason.code).toBe("PORT_CONFLICT");
    expect(failed.reason.message).toContain(String(held.port));
    const applies = agent.actions.count("apply", `${wid}-0`);
    await sleep(3_000);
    expect(agent.actions.count("apply", `${wid}-0`)).toBe(applies);
    expect((await h.replica(wid)).reason.code).toBe("PORT_CONFLICT");

    // Freed and retried, it runs and answers.
    await new Promise<void>((r) => held.server.close(() => r()));
    await h.rest("POST", `/v1/workloads/${wid}/retry`, {});
    await until("running after retry", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_RUNNING");
    expect(await until("port answers", () => httpText(`http://127.0.0.1:${held.port}/`))).toBe("persys web ok\n");
  });

  it.each([
    {
      name: "a non-zero exit → CONTAINER_EXITED",
      spec: { command: ["sh", "-c", "exit 3"] },
      resources: { cpuMillicores: 100, memoryMib: 64 },
      code: "CONTAINER_EXITED",
      message: "exited with code 3",
    },
    {
      name: "the memory limit exceeded → OOM_KILLED",
      spec: { command: ["sh", "-c", "x=$(head -c 67108864 /dev/zero | tr '\\0' a); sleep 60"] },
      resources: { cpuMillicores: 100, memoryMib: 16 },
      code: "OOM_KILLED",
      message: "killed for exceeding its memory limit of 16 MiB",
    },
    {
      name: "a failing healthcheck → UNHEALTHY",
      spec: {
        command: ["sleep", "600"],
        healthcheck: {
          command: ["sh", "-c", "echo probe says no; exit 1"],
          intervalSeconds: 1,
          timeoutSeconds: 1,
          retries: 2,
        },
      },
      resources: { cpuMillicores: 100, memoryMib: 64 },
      code: "UNHEALTHY",
      message: "healthcheck failed 2 times in a row: probe says no",
    },
  ])("reports $name with its typed reason", async ({ spec, resources, code, message }) => {
    h = await startDockerHarness();
    await h.addAgent("crash");
    const wid = `crash-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_CONTAINER",
      resources,
      container: {
        image: BUSYBOX_IMAGE,
        restartPolicy: { mode: "RESTART_POLICY_MODE_NO" },
        stopTimeoutSeconds: 1,
        ...spec,
      },
    });
    const failed = await until(
      `replica failed with ${code}`,
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_FAILED" && r.reason?.code === code ? r : undefined;
      },
      30_000,
    );
    expect(failed.reason.message).toBe(message);
    expect(failed.reason.retryable).toBe(true);
  });

  it("restarts a container killed outside Persys (docker kill) by its policy and records the event", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("kill");
    const wid = `killed-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, container(wid, {}));
    await until("running", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_RUNNING");
    const [c] = await workloadContainers(agent.nodeId, wid);
    const before = await docker.getContainer(c!.Id).inspect();

    await docker.getContainer(c!.Id).kill();
    const restarted = await until("restarted and running", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_RUNNING" && (r.restartCount ?? 0) >= 1 ? r : undefined;
    });
    expect(restarted.restartCount).toBe(1);
    const after = await docker.getContainer(c!.Id).inspect();
    expect(after.State.Running).toBe(true);
    expect(Date.parse(after.State.StartedAt)).toBeGreaterThan(Date.parse(before.State.StartedAt));
    expect(await workloadContainers(agent.nodeId, wid)).toHaveLength(1);

    const events = await until("the restart is in the event log", async () => {
      const got = await h!.rest("GET", `/v1/events?workloadId=${wid}`);
      const list = (got.body.events as any[]).filter(
        (e) => e.type === "ReplicaStateChanged" || e.type === "ReplicaFailed",
      );
      return list.some((e) => /restart/.test(e.message)) ? list : undefined;
    });
    expect(events.map((e: any) => e.message).join("\n")).toMatch(
      /exited with code 137; restarting in \d+ ms|restarted by the runtime \(restart 1\)/,
    );
  });
});
