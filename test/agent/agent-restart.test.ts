/**
 * The agent as a process: killed with SIGKILL and started again, it keeps its desired replicas
 * (SQLite in the state dir) and adopts the running containers instead of recreating them; a
 * container made by hand with Persys labels and no assignment is garbage-collected after the grace.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import { BUSYBOX_IMAGE, containersOf, docker, WEB_IMAGE, workloadContainers } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("agent restart and garbage collection", () => {
  it("adopts running containers after SIGKILL and restart: same container ids, never restarted", async () => {
    h = await startDockerHarness();
    const node = h.nodeId("adopt");
    const first = await h.spawnAgent("adopt");
    const wid = `adopt-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_CONTAINER",
      replicas: 2,
      resources: { cpuMillicores: 100, memoryMib: 32 },
      container: { image: WEB_IMAGE, stopTimeoutSeconds: 1 },
    });
    await until("both running", async () => {
      const got = await h!.rest("GET", `/v1/workloads/${wid}`);
      return got.body.workload.status.readyReplicas === 2;
    });
    const before = await workloadContainers(node, wid);
    expect(before).toHaveLength(2);
    const started = new Map<string, string>();
    for (const c of before) started.set(c.Id, (await docker.getContainer(c.Id).inspect()).State.StartedAt);

    await first.kill("SIGKILL");
    for (const c of before) expect((await docker.getContainer(c.Id).inspect()).State.Running).toBe(true);
    await until(
      "node NotReady while the agent is dead",
      async () => (await h!.rest("GET", `/v1/nodes/${node}`)).body.node.state === "NODE_STATE_NOT_READY",
      10_000,
    );

    // The same node id and state dir (a new port: the registration tells the control plane).
    const flags = flagsOf(first.child.spawnargs);
    await h.spawnAgent("adopt", { "state-dir": flags["state-dir"]! });
    await until(
      "node Ready again with both replicas running",
      async () => {
        const n = await h!.rest("GET", `/v1/nodes/${node}`);
        const w = await h!.rest("GET", `/v1/workloads/${wid}`);
        return n.body.node.state === "NODE_STATE_READY" && w.body.workload.status.readyReplicas === 2;
      },
      20_000,
    );
    const after = await workloadContainers(node, wid);
    expect(after.map((c) => c.Id).sort()).toEqual(before.map((c) => c.Id).sort());
    for (const c of after) {
      const inspected = await docker.getContainer(c.Id).inspect();
      expect(inspected.State.StartedAt).toBe(started.get(c.Id));
      expect(inspected.RestartCount).toBe(0);
    }
  });

  it("removes a hand-made Persys-labelled container with no assignment after the grace, and nothing else", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("gc", { "gc-orphan-grace-seconds": "2" });
    const node = agent.nodeId;
    const wid = `keep-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_CONTAINER",
      container: { image: BUSYBOX_IMAGE, stopTimeoutSeconds: 1 },
    });
    await until("kept replica running", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_RUNNING");

    // The grace counts from the collector's first sighting, which can come before start() returns.
    const made = Date.now();
    const orphan = await docker.createContainer({
      name: `ghost-${h.id}`,
      Image: BUSYBOX_IMAGE,
      Labels: {
        "persys.managed": "true",
        "persys.node": node,
        "persys.workload": `ghost-${h.id}`,
        "persys.replica": "0",
        "persys.revision": "hand-made",
      },
    });
    await orphan.start();
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await orphan.inspect()).State.Running).toBe(true);
    await until(
      "orphan removed",
      async () => {
        try {
          await orphan.inspect();
          return false;
        } catch (error) {
          return (error as { statusCode?: number }).statusCode === 404;
        }
      },
      15_000,
    );
    expect(Date.now() - made).toBeGreaterThanOrEqual(2_000);
    const left = await containersOf(node);
    expect(left.map((c) => c.Labels["persys.workload"])).toEqual([wid]);
    expect(agent.actions.count("gc")).toBe(1);
  });
});

/** The `--flag value` pairs of a spawned agent's arguments. */
function flagsOf(args: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length - 1; i++) {
    const a = args[i]!;
    if (a.startsWith("--") && !a.includes("=")) out[a.slice(2)] = args[i + 1]!;
  }
  return out;
}
