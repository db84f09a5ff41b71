/**
 * The control plane across store outages: with Redis stopped, events degrade but scheduling goes on;
 * with etcd killed and restarted, no acknowledged write is lost and the control plane recovers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startPrivateEtcd, startPrivateRedis } from "../support/private-servers.js";
import { container, type Harness, startHarness, testConfig, until } from "./control-plane-harness.js";

let h: Harness | undefined;
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const stop of stops.splice(0)) await stop().catch(() => {});
});

describe("store outages", () => {
  it("keeps scheduling while Redis is down, reports the event store degraded, and records events again after", async () => {
    const redis = await startPrivateRedis();
    stops.push(() => redis.stop());
    h = await startHarness(testConfig({ "events-url": redis.url }));
    const node = await h.addNode({ id: "n1" });
    await redis.stop();
    await until("readiness reports the degraded event store", async () => {
      const ready = await h!.rest("GET", "/readyz");
      return JSON.stringify(ready.body).includes("degraded") ? ready : undefined;
    });
    const put = await h.rest("PUT", "/v1/workloads/during-outage", container("during-outage"));
    expect(put.status).toBe(201);
    await until("placed and running without Redis", async () => node.replica("during-outage")?.state === "RUNNING");
    await redis.start();
    await until(
      "event store ok again",
      async () => !JSON.stringify((await h!.rest("GET", "/readyz")).body).includes("degraded"),
    );
    await h.rest("PUT", "/v1/workloads/after-outage", container("after-outage"));
    const events = await until("events recorded after the outage", async () => {
      const list = await h!.rest("GET", "/v1/events?workloadId=after-outage");
      return list.body.events?.length > 0 ? list.body.events : undefined;
    });
    expect(events.map((e: any) => e.type)).toContain("WorkloadApplied");
  });

  it("loses no acknowledged write when etcd is killed and restarted", async () => {
    const etcd = await startPrivateEtcd();
    stops.push(() => etcd.stop());
    h = await startHarness(testConfig({ "state-endpoints": etcd.endpoints.join(",") }));
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = `w${i}`;
      const put = await h.rest("PUT", `/v1/workloads/${id}`, container(id));
      if (put.status === 201) acknowledged.push(id);
    }
    expect(acknowledged).toHaveLength(20);
    await etcd.stop({ hard: true });
    const during = await h.rest("PUT", "/v1/workloads/while-down", container("while-down"));
    expect(during.status).toBeGreaterThanOrEqual(500);
    expect(during.body.retryable).toBe(true);
    await etcd.start();
    await until(
      "writes accepted again",
      async () => (await h!.rest("PUT", "/v1/workloads/after", container("after"))).status === 201,
      30_000,
    );
    for (const id of acknowledged) {
      const got = await h.rest("GET", `/v1/workloads/${id}`);
      expect(got.status, id).toBe(200);
    }
  });
});
