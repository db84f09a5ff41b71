/**
 * RestartWorkload in reboot mode for a container, on the real Docker daemon: the container is
 * restarted in place (same container id, started again), the replica reports the reboot's
 * revision and a ReplicaRebooted event records it; the default mode still recreates it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import { docker, WEB_IMAGE, workloadContainers } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("container reboot through the API", () => {
  it("restarts the same container in place; the default restart recreates it", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("reboot");
    const wid = `reboot-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_CONTAINER",
      resources: { cpuMillicores: 100, memoryMib: 64 },
      container: { image: WEB_IMAGE, stopTimeoutSeconds: 1 },
    });
    const first = await until("running", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_RUNNING" ? r : undefined;
    });
    const [c] = await workloadContainers(agent.nodeId, wid);
    const before = await docker.getContainer(c!.Id).inspect();

    const asked = await h.rest("POST", `/v1/workloads/${wid}/restart`, { mode: "RESTART_MODE_REBOOT" });
    expect(asked.status).toBe(200);
    await until("rebooted", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_RUNNING" && r.observedRevision === `${first.observedRevision}+b1`
        ? r
        : undefined;
    });
    const after = await docker.getContainer(c!.Id).inspect();
    expect(after.Id).toBe(before.Id);
    expect(Date.parse(after.State.StartedAt)).toBeGreaterThan(Date.parse(before.State.StartedAt));
    const events = await until("a ReplicaRebooted event", async () => {
      const got = (await h!.rest("GET", `/v1/workloads/${wid}/events?types=ReplicaRebooted`)).body.events ?? [];
      return got.length > 0 ? got : undefined;
    });
    expect(events.map((e: any) => e.message)).toEqual(["replica 0 rebooted in place (reboot 1, same runtime object)"]);

    // The default mode recreates: a new container.
    await h.rest("POST", `/v1/workloads/${wid}/restart`, {});
    await until("recreated", async () => {
      const r = await h!.replica(wid);
      const [now] = await workloadContainers(agent.nodeId, wid);
      return r?.state === "REPLICA_STATE_RUNNING" && now && now.Id !== before.Id ? r : undefined;
    });
    expect(await workloadContainers(agent.nodeId, wid)).toHaveLength(1);
  });
});
