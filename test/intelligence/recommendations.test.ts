/**
 * Recommendations on live data: oversized requests (the simulated agents report 20 % of each
 * request as used), reservations skewed onto one node (placed while the other was cordoned) and a
 * workload whose image pull keeps failing.
 */
import { api, PersysClient } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { container, type Harness, startHarness, testConfig, until } from "../controlplane/control-plane-harness.js";
import { persysctlInProcess } from "./cli-io.js";

let h: Harness;
let client: PersysClient;

beforeAll(async () => {
  h = await startHarness(testConfig({ "intelligence-sample-interval-ms": "200" }));
  const n1 = await h.addNode({ id: "n1" }, { usageFactor: 0.2 });
  const n2 = await h.addNode({ id: "n2" }, { usageFactor: 0.2 });
  for (const node of [n1, n2])
    node.failNextApply("flaky", { code: "IMAGE_PULL_FAILED", message: "registry timed out", times: 3 });
  expect((await h.rest("POST", "/v1/nodes/n1/cordon", { reason: "test" })).status).toBe(200);
  await h.rest("PUT", "/v1/workloads/flaky", container("flaky", { resources: { cpuMillicores: 100, memoryMib: 64 } }));
  await until(
    "flaky failed, retried or moved 3 times",
    async () => {
      const events = (await h.rest("GET", "/v1/workloads/flaky/events")).body.events;
      return events.filter((e: any) => ["ReplicaFailed", "ReplicaRetryScheduled"].includes(e.type)).length >= 3;
    },
    60_000,
  );
  await h.rest("POST", "/v1/nodes/n1/uncordon");
  await h.rest("POST", "/v1/nodes/n2/cordon", { reason: "test" });
  await h.rest(
    "PUT",
    "/v1/workloads/api",
    container("api", { replicas: 2, resources: { cpuMillicores: 200, memoryMib: 512 } }),
  );
  await until("api running on n1", async () => {
    const w = (await h.rest("GET", "/v1/workloads/api")).body.workload;
    return w.status.replicas.filter((r: any) => r.state === "REPLICA_STATE_RUNNING" && r.nodeId === "n1").length === 2;
  });
  await h.rest("POST", "/v1/nodes/n2/uncordon");
  // A few usage samples per replica (one per 200 ms).
  await new Promise((r) => setTimeout(r, 2000));
  client = new PersysClient({ endpoint: h.server.grpcAddress });
}, 120_000);

afterAll(async () => {
  client?.close();
  await h?.close();
});

describe("recommendations", () => {
  it("right-sizes requests from measured p95 with the freed reservations as effect", async () => {
    const recs = await client.intelligence.recommendations({ windowSeconds: 60 });
    const memory = recs.find((r) => r.id === "right-size/api/memory");
    expect(memory, JSON.stringify(recs.map((r) => r.id))).toBeDefined();
    // 20 % of 512 MiB is used: p95 ≈ 102 MiB, suggested with 20 % headroom ≈ 123 MiB.
    const suggested = Number(/memoryMib to (\d+)/.exec(memory!.action)?.[1]);
    expect(suggested).toBeGreaterThanOrEqual(120);
    expect(suggested).toBeLessThanOrEqual(126);
    expect(memory!.expectedEffect).toBe(
      `frees ${(512 - suggested) * 2} MiB of memory reservations across 2 replica(s)`,
    );
    expect(memory!.evidence.map((e) => e.ref)).toEqual(["usage:replica:api:0:memory", "usage:replica:api:1:memory"]);
  });

  it("suggests moving one replica off the node the reservations are skewed onto", async () => {
    const recs = await client.intelligence.recommendations({ windowSeconds: 60 });
    const move = recs.find((r) => r.kind === api.RecommendationKind.RECOMMENDATION_KIND_REBALANCE);
    expect(move).toMatchObject({ id: "rebalance/n1/n2", workloadId: "api", nodeId: "n1" });
    // A node's share is its higher of cpu and memory: n1 holds 2 × (200 m, 512 MiB) of (2000 m, 2048 MiB)
    // = 50 %; n2 holds flaky's (100 m, 64 MiB) = 5 % (cpu). Moving one api replica: n1 25 %, n2 28 % (memory 576/2048).
    expect(move!.summary).toBe("n1 is 50 % reserved, n2 5 %: skew 45 %");
    expect(move!.action).toMatch(/^move replica [01] of api from n1 to n2$/);
    expect(move!.expectedEffect).toBe("n1 25 %, n2 28 % reserved");
  });

  it("flags the workload whose replicas keep failing, citing the failures", async () => {
    const recs = await client.intelligence.recommendations({ windowSeconds: 60 });
    const flapping = recs.find((r) => r.id === "flapping/flaky");
    expect(flapping).toBeDefined();
    expect(flapping!.action).toContain("IMAGE_PULL_FAILED");
    expect(flapping!.evidence.length).toBeGreaterThanOrEqual(3);
    expect(flapping!.evidence.every((e) => /^\d+-\d+$/.test(e.ref))).toBe(true);
  });

  it("persysctl recommend prints a table; ask 'what should I change?' answers with the same findings", async () => {
    const table = await persysctlInProcess(["--endpoint", h.server.grpcAddress, "recommend"]);
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/KIND\s+ID\s+SUMMARY/);
    expect(table.out).toContain("right-size/api/memory");
    const answer = await client.intelligence.ask("what should I change?");
    expect(answer.intent).toBe("recommend");
    expect(answer.recommendations.map((r) => r.id)).toContain("rebalance/n1/n2");
  });
});
