/**
 * Two agents on one machine (distinct node ids, state dirs and ports, one Docker daemon): when the
 * agent running a replica is killed, the replica comes up on the other within the lease TTL, the
 * control plane's lostAfter and the start time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import type { AgentProcess } from "./support/agent-process.js";
import { docker, httpText, WEB_IMAGE, workloadContainers } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const LEASE_TTL_S = 2;
const LOST_AFTER_S = 3;
/** Generous start time on two loaded cores: reconcile, create and start, report. */
const START_BUDGET_S = 8;

describe("failover between two agents on one machine", () => {
  it("re-places the replicas of a killed agent on the other one within TTL + lostAfter + start", async () => {
    h = await startDockerHarness({
      "nodes-lease-ttl-seconds": String(LEASE_TTL_S),
      "nodes-lost-after-seconds": String(LOST_AFTER_S),
    });
    const agents: Record<string, AgentProcess> = {
      [h.nodeId("a")]: await h.spawnAgent("a"),
      [h.nodeId("b")]: await h.spawnAgent("b"),
    };
    const wid = `fo-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_CONTAINER",
      resources: { cpuMillicores: 100, memoryMib: 32 },
      container: { image: WEB_IMAGE, ports: [{ containerPort: 8080 }], stopTimeoutSeconds: 1 },
    });
    const first = await until("running on one node", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_RUNNING" ? r : undefined;
    });
    const victim = first.nodeId as string;
    const survivor = Object.keys(agents).find((n) => n !== victim)!;
    expect((await workloadContainers(victim, wid)).map((c) => c.Names[0])).toEqual([`/${wid}-0`]);

    const killedAt = Date.now();
    await agents[victim]!.kill("SIGKILL");
    const moved = await until(
      "running on the other node",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_RUNNING" && r.nodeId === survivor ? r : undefined;
      },
      (LEASE_TTL_S + LOST_AFTER_S + START_BUDGET_S) * 1000 + 5_000,
    );
    const took = Date.now() - killedAt;
    expect(took).toBeLessThan((LEASE_TTL_S + LOST_AFTER_S + START_BUDGET_S) * 1000);
    expect(took).toBeGreaterThan(LOST_AFTER_S * 1000);
    expect(moved.nodeId).toBe(survivor);

    // The survivor runs its own container; the dead agent's copy is still there (nobody tells it).
    const [mine] = await workloadContainers(survivor, wid);
    const inspected = await docker.getContainer(mine!.Id).inspect();
    expect(inspected.State.Running).toBe(true);
    expect(inspected.Config.Labels["persys.node"]).toBe(survivor);
    expect(inspected.Name).toBe(`/${wid}-0.${survivor}`);
    expect(await workloadContainers(victim, wid)).toHaveLength(1);
    const ip = inspected.NetworkSettings.Networks.bridge?.IPAddress;
    expect(await until("the moved replica answers", () => httpText(`http://${ip}:8080/`))).toBe("persys web ok\n");

    const events = (await h.rest("GET", `/v1/events?workloadId=${wid}`)).body.events.map((e: any) => e.type);
    expect(events).toEqual(expect.arrayContaining(["ReplicaMoved"]));
  });
});
