/**
 * Disk use has a series too: a simulated agent reports its data filesystem filling by 1 GiB every
 * 500 ms (what the real agent measures with statfs), heartbeats write `usage:node:<id>:disk`, and
 * the forecast says when the disk is full — on a real control plane with real etcd and Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness, testConfig, until } from "../controlplane/control-plane-harness.js";
import type { SimulatedNode } from "../support/sim-agents/index.js";

const CAPACITY_GIB = 20;
const START_GIB = 4;
const STEPS = 10;
const STEP_MS = 500;

let h: Harness;
let node: SimulatedNode;
const stepAt: number[] = [];

beforeAll(async () => {
  h = await startHarness(testConfig({ "intelligence-sample-interval-ms": "200" }));
  node = await h.addNode({ id: "d1", usage: { cpuMillicores: 100, memoryMiB: 256, diskGiB: START_GIB } });
  for (let k = 0; k <= STEPS; k++) {
    const started = Date.now();
    stepAt.push(started);
    node.setBaselineUsage({ diskGiB: START_GIB + k });
    await until(`disk use ${START_GIB + k} GiB seen`, async () => {
      const n = (await h.rest("GET", "/v1/nodes/d1")).body.node;
      return n.usage?.diskGib === START_GIB + k;
    });
    const rest = STEP_MS - (Date.now() - started);
    if (k < STEPS && rest > 0) await new Promise((r) => setTimeout(r, rest));
  }
  await new Promise((r) => setTimeout(r, 400));
}, 60_000);

afterAll(() => h?.close());

describe("disk usage forecast", () => {
  it("says when the disk is full within 15 % of the horizon, from the disk usage series", async () => {
    const windowSeconds = Math.ceil((Date.now() - stepAt[0]!) / 1000);
    const res = await h.rest(
      "GET",
      `/v1/forecast?nodeId=d1&windowSeconds=${windowSeconds}&method=FORECAST_METHOD_LINEAR`,
    );
    expect(res.status).toBe(200);
    const f = res.body.forecasts.find(
      (x: any) => x.dimension === "RESOURCE_DIMENSION_DISK" && x.signal === "FORECAST_SIGNAL_USAGE",
    );
    expect(f).toMatchObject({ nodeId: "d1", unit: "GiB", limit: CAPACITY_GIB, current: START_GIB + STEPS });
    expect(f.series).toBe("usage:node:d1:disk");
    const meanStep = (stepAt.at(-1)! - stepAt[0]!) / STEPS;
    const truth = stepAt[0]! + (CAPACITY_GIB - START_GIB) * meanStep;
    const predicted = Date.parse(f.exhaustedAt);
    const horizon = truth - Date.now();
    console.log(
      `disk forecast: error ${((predicted - truth) / 1000).toFixed(2)} s on a ${(horizon / 1000).toFixed(1)} s horizon, ` +
        `R² ${f.rSquared.toFixed(3)}, ${f.points} points, ${f.message}`,
    );
    expect(Math.abs(predicted - truth)).toBeLessThanOrEqual(Math.max(1000, 0.15 * horizon));
    expect(f.message).toMatch(/d1 disk usage reaches 20 GiB in/);
    // The cluster forecast sums the disk series of ready nodes, too.
    const all = (await h.rest("GET", `/v1/forecast?windowSeconds=${windowSeconds}`)).body.forecasts;
    expect(
      all.find(
        (x: any) => !x.nodeId && x.dimension === "RESOURCE_DIMENSION_DISK" && x.signal === "FORECAST_SIGNAL_USAGE",
      ),
    ).toMatchObject({ series: "usage:node:*:disk", limit: CAPACITY_GIB });
  });
});
