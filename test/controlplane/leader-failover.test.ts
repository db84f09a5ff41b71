/**
 * Two `persys server` processes on one etcd: the leader is killed with SIGKILL, the other leads
 * within the leader lease TTL, resumes from stored state, and no replica ever runs on two nodes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { etcdEndpoints, redisUrl } from "../support/services.js";
import { SimulatedNode } from "../support/sim-agents/index.js";
import { container, smallNode, until } from "./control-plane-harness.js";
import { type ServerProcess, startServerProcess } from "./server-process.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {});
});

async function rest(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe("leader failover", () => {
  it("moves leadership within the lease TTL after SIGKILL, without assigning a replica twice", async () => {
    const prefix = `/persys-test/failover-${process.pid}-${Date.now().toString(36)}/`;
    const flags = {
      "state-kind": "etcd",
      "state-endpoints": etcdEndpoints().join(","),
      "state-prefix": prefix,
      "events-kind": "redis",
      "events-url": redisUrl(),
      "events-prefix": prefix.replaceAll("/", ":"),
      "listen-grpc": "127.0.0.1:0",
      "listen-http": "127.0.0.1:0",
      "leader-ttl-seconds": "3",
      "nodes-lease-ttl-seconds": "3",
      "nodes-lost-after-seconds": "10",
      "log-level": "warn",
    };
    const servers: ServerProcess[] = [
      await startServerProcess({ ...flags, id: "server-a" }),
      await startServerProcess({ ...flags, id: "server-b" }),
    ];
    for (const s of servers) cleanup.push(() => s.kill("SIGKILL"));
    const leaderId = await until(
      "a leader",
      async () => (await rest(servers[0]!.httpUrl, "GET", "/v1/cluster/summary")).body.summary.leaderId,
    );
    const leaderIndex = ["server-a", "server-b"].indexOf(leaderId);
    expect(leaderIndex).toBeGreaterThanOrEqual(0);
    const leader = servers[leaderIndex]!;
    const survivor = servers[1 - leaderIndex]!;

    // Nodes report to the surviving server (any server handles heartbeats).
    const nodes = await Promise.all(
      ["n1", "n2", "n3"].map(async (id) => {
        const node = await SimulatedNode.start({
          node: smallNode(id),
          controlPlane: survivor.grpcAddress,
          heartbeatIntervalMs: 500,
        });
        cleanup.push(() => node.close());
        await node.registered();
        return node;
      }),
    );
    await rest(survivor.httpUrl, "PUT", "/v1/workloads/web", container("web", { replicas: 3 }));
    await until(
      "three replicas running",
      async () => nodes.flatMap((n) => n.replicas()).filter((r) => r.state === "RUNNING").length === 3,
    );

    const killedAt = Date.now();
    await leader.kill("SIGKILL");
    const newLeader = await until(
      "the survivor leads",
      async () => {
        const id = (await rest(survivor.httpUrl, "GET", "/v1/cluster/summary")).body.summary.leaderId;
        return id && id !== leaderId ? id : undefined;
      },
      15_000,
    );
    const takeoverMs = Date.now() - killedAt;
    console.info(`leader failover: ${leaderId} killed, ${newLeader} leads after ${takeoverMs} ms (lease TTL 3 s)`);
    expect(takeoverMs).toBeLessThan(3_000 + 2_500);

    // The new leader resumes from stored state: existing replicas stay, new work is scheduled.
    await rest(survivor.httpUrl, "PUT", "/v1/workloads/api", container("api", { replicas: 2 }));
    await until(
      "api running",
      async () =>
        nodes.flatMap((n) => n.replicas()).filter((r) => r.workloadId === "api" && r.state === "RUNNING").length === 2,
    );
    const placements = nodes.flatMap((n) => n.replicas().map((r) => `${r.workloadId}/${r.index}`));
    expect(placements.sort()).toEqual(["api/0", "api/1", "web/0", "web/1", "web/2"]);
    const web = await rest(survivor.httpUrl, "GET", "/v1/workloads/web");
    expect(web.body.workload.status.state).toBe("WORKLOAD_STATE_RUNNING");
  });
});
