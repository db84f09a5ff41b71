/**
 * The cooldown survives a leader's death: two `persys server` processes on one etcd and Redis, an
 * autoscale policy acts once, the leader is killed with SIGKILL during the cooldown, and the new
 * leader records COOLDOWN — measured from the recorded last action — and acts again only once the
 * cooldown has run out.
 */
import { api, PersysClient } from "@persys/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { container, smallNode, until } from "../controlplane/control-plane-harness.js";
import { type ServerProcess, startServerProcess } from "../controlplane/server-process.js";
import { etcdEndpoints, redisUrl } from "../support/services.js";
import { SimulatedNode } from "../support/sim-agents/index.js";

const COOLDOWN_S = 12;
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

describe("automation across a leader failover", () => {
  it("a new leader honours the cooldown of the action its killed predecessor took", async () => {
    const prefix = `/persys-test/automation-failover-${process.pid}-${Date.now().toString(36)}/`;
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
      "nodes-lost-after-seconds": "30",
      "intelligence-sample-interval-ms": "200",
      "automation-evaluate-interval-ms": "100",
      "log-level": "warn",
    };
    const servers = [
      await startServerProcess({ ...flags, id: "auto-a" }),
      await startServerProcess({ ...flags, id: "auto-b" }),
    ];
    for (const s of servers) cleanup.push(() => s.kill("SIGKILL"));
    const leaderId: string = await until(
      "a leader",
      async () => (await rest(servers[0]!.httpUrl, "GET", "/v1/cluster/summary")).body.summary.leaderId,
    );
    const leader = servers[["auto-a", "auto-b"].indexOf(leaderId)]!;
    const survivor: ServerProcess = servers.find((s) => s !== leader)!;
    const survivorId = leaderId === "auto-a" ? "auto-b" : "auto-a";
    // Nodes report to the survivor; their replicas use 95 % of their cpu request from the start.
    for (const id of ["n1", "n2"]) {
      const node = await SimulatedNode.start({
        node: smallNode(id),
        controlPlane: survivor.grpcAddress,
        heartbeatIntervalMs: 300,
        usageFactor: 0.95,
      });
      cleanup.push(() => node.close());
      await node.registered();
    }
    await rest(
      survivor.httpUrl,
      "PUT",
      "/v1/workloads/web",
      container("web", { replicas: 2, resources: { cpuMillicores: 100, memoryMib: 64 } }),
    );
    const client = new PersysClient({ endpoint: survivor.grpcAddress });
    cleanup.push(async () => client.close());
    await client.automation.apply({
      id: "web-autoscale",
      when: { metric: { workloadId: "web", metric: "cpu", threshold: 80, windowSeconds: 2 } },
      action: { scale: { workloadId: "web", step: 1, minReplicas: 2, maxReplicas: 4 } },
      cooldownSeconds: COOLDOWN_S,
    });
    const O = api.AuditOutcome;
    const actedRecords = async () =>
      (await client.automation.audit({ policyId: "web-autoscale", limit: 1000 })).filter(
        (r) => r.outcome === O.AUDIT_OUTCOME_ACTED,
      );
    const [first] = (await until(
      "the leader scaled web",
      async () => {
        const acted = await actedRecords();
        return acted.length > 0 ? acted : undefined;
      },
      20_000,
    ))!;
    expect(first!.evaluatedBy).toBe(leaderId);
    expect(first!.action).toBe("scale web 2 → 3");

    // Killed during the cooldown; the survivor takes over within the lease TTL.
    await leader.kill("SIGKILL");
    await until(
      "the survivor leads",
      async () => (await rest(survivor.httpUrl, "GET", "/v1/cluster/summary")).body.summary.leaderId === survivorId,
      15_000,
    );
    await until("the new leader evaluates the policy", async () =>
      (await client.automation.audit({ policyId: "web-autoscale", limit: 5 })).some(
        (r) => r.evaluatedBy === survivorId && r.outcome === O.AUDIT_OUTCOME_COOLDOWN,
      ),
    );
    const [second] = (await until(
      "the new leader scales again after the cooldown",
      async () => {
        const acted = await actedRecords();
        return acted.length > 1 ? acted : undefined;
      },
      COOLDOWN_S * 1000 + 10_000,
    ))!;
    expect(second!.evaluatedBy).toBe(survivorId);
    expect(second!.action).toBe("scale web 3 → 4");
    const gap = second!.time!.getTime() - first!.time!.getTime();
    console.log(`acted again ${gap} ms after the first action (cooldown ${COOLDOWN_S} s), by the new leader`);
    expect(gap).toBeGreaterThanOrEqual(COOLDOWN_S * 1000);
    expect(gap).toBeLessThan(COOLDOWN_S * 1000 + 3000);
    // In between, every evaluation of the new leader said COOLDOWN, counting from the first action.
    const between = (await client.automation.audit({ policyId: "web-autoscale", limit: 1000 })).filter(
      (r) => r.evaluatedBy === survivorId && r.time! < second!.time! && r.time! > first!.time!,
    );
    expect(between.length).toBeGreaterThan(5);
    expect(new Set(between.map((r) => r.outcome))).toEqual(new Set([O.AUDIT_OUTCOME_COOLDOWN]));
    // Each says how long is left counted from the predecessor's action, not from the election.
    for (const r of between) {
      const left = Number(/cooling down for (\d+) s more/.exec(r.message)![1]);
      const expected = COOLDOWN_S - (r.time!.getTime() - first!.time!.getTime()) / 1000;
      expect(Math.abs(left - expected), r.message).toBeLessThanOrEqual(1.5);
    }
    expect((await rest(survivor.httpUrl, "GET", "/v1/workloads/web")).body.workload.replicas).toBe(4);
  }, 90_000);
});
