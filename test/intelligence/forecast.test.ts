/**
 * Forecasts on live data: a node is filled step by step (one more replica of 128 MiB each second)
 * on a real control plane with real etcd and Redis and a simulated agent; the forecast of when its
 * memory runs out must land near the time the fill schedule actually reaches the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { container, type Harness, startHarness, testConfig, until } from "../controlplane/control-plane-harness.js";

const STEP_MIB = 128;
const STEPS = 8;
const STEP_MS = 1000;
const ALLOCATABLE_MIB = 2048;

let h: Harness;
const stepAt: number[] = [];

beforeAll(async () => {
  h = await startHarness(testConfig({ "intelligence-sample-interval-ms": "200" }));
  await h.addNode({ id: "n1" });
  for (let k = 1; k <= STEPS; k++) {
    const started = Date.now();
    stepAt.push(started);
    const put = await h.rest(
      "PUT",
      "/v1/workloads/fill",
      container("fill", { replicas: k, resources: { cpuMillicores: 50, memoryMib: STEP_MIB } }),
    );
    expect(put.status).toBeLessThan(300);
    await until(`${k} replicas reserved on n1`, async () => {
      const node = (await h.rest("GET", "/v1/nodes/n1")).body.node;
      return node.allocated?.memoryMib === k * STEP_MIB;
    });
    const rest = STEP_MS - (Date.now() - started);
    if (k < STEPS && rest > 0) await new Promise((r) => setTimeout(r, rest));
  }
  // One more sample interval so the last step is in the series.
  await new Promise((r) => setTimeout(r, 400));
}, 60_000);

afterAll(() => h?.close());

/** When the fill schedule (one step per measured mean interval) reaches `limit` MiB at `perStep` MiB a step. */
function trueExhaustion(limit: number, perStep: number): number {
  const meanStep = (stepAt.at(-1)! - stepAt[0]!) / (stepAt.length - 1);
  return stepAt[0]! + (limit / perStep - 1) * meanStep;
}

const memory = (f: any) => f.dimension === "RESOURCE_DIMENSION_MEMORY";

describe("forecast of a node filled step by step", () => {
  it("says when memory reservations reach allocatable within ±2 s of the true time, 8 steps ahead", async () => {
    const windowSeconds = Math.ceil((Date.now() - stepAt[0]!) / 1000);
    const res = await h.rest(
      "GET",
      `/v1/forecast?nodeId=n1&windowSeconds=${windowSeconds}&method=FORECAST_METHOD_LINEAR`,
    );
    expect(res.status).toBe(200);
    const f = res.body.forecasts.find((x: any) => memory(x) && x.signal === "FORECAST_SIGNAL_RESERVATION");
    expect(f).toMatchObject({ nodeId: "n1", unit: "MiB", limit: ALLOCATABLE_MIB, method: "FORECAST_METHOD_LINEAR" });
    expect(f.current).toBe(STEPS * STEP_MIB);
    const truth = trueExhaustion(ALLOCATABLE_MIB, STEP_MIB);
    const predicted = Date.parse(f.exhaustedAt);
    console.log(
      `reservation forecast: predicted ${new Date(predicted).toISOString()}, true ${new Date(truth).toISOString()}, ` +
        `error ${((predicted - truth) / 1000).toFixed(2)} s, R² ${f.rSquared.toFixed(3)}, ${f.points} points, ${f.message}`,
    );
    expect(Math.abs(predicted - truth)).toBeLessThanOrEqual(2000);
    expect(Date.parse(f.exhaustedAtEarliest)).toBeLessThanOrEqual(predicted);
    expect(Date.parse(f.exhaustedAtLatest)).toBeGreaterThanOrEqual(predicted);
    expect(f.rSquared).toBeGreaterThan(0.9);
    expect(f.slopePerHour).toBeGreaterThan(0);
    expect(f.message).toMatch(/n1 memory reservations reach 2048 MiB in/);
  });

  it("forecasts measured use reaching capacity within 10 % of the horizon (Holt or linear, chosen by fit)", async () => {
    const windowSeconds = Math.ceil((Date.now() - stepAt[0]!) / 1000);
    const res = await h.rest("GET", `/v1/forecast?windowSeconds=${windowSeconds}`);
    const f = res.body.forecasts.find(
      (x: any) => memory(x) && x.nodeId === "n1" && x.signal === "FORECAST_SIGNAL_USAGE",
    );
    // The simulated agent reports half of each running replica's request as used.
    const truth = trueExhaustion(ALLOCATABLE_MIB, STEP_MIB / 2);
    const predicted = Date.parse(f.exhaustedAt);
    const horizon = truth - Date.now();
    console.log(
      `usage forecast: ${f.method}, error ${((predicted - truth) / 1000).toFixed(2)} s on a ${(horizon / 1000).toFixed(1)} s horizon, ${f.message}`,
    );
    expect(Math.abs(predicted - truth)).toBeLessThanOrEqual(0.1 * horizon);
  });

  it("includes the cluster (the sum over ready nodes) and puts cpu, 40 steps from its limit, after memory", async () => {
    const windowSeconds = Math.ceil((Date.now() - stepAt[0]!) / 1000);
    const res = await h.rest("GET", `/v1/forecast?windowSeconds=${windowSeconds}&method=FORECAST_METHOD_LINEAR`);
    const cluster = res.body.forecasts.find(
      (x: any) => !x.nodeId && memory(x) && x.signal === "FORECAST_SIGNAL_RESERVATION",
    );
    expect(cluster.limit).toBe(ALLOCATABLE_MIB);
    expect(Math.abs(Date.parse(cluster.exhaustedAt) - trueExhaustion(ALLOCATABLE_MIB, STEP_MIB))).toBeLessThanOrEqual(
      2000,
    );
    const cpu = res.body.forecasts.find(
      (x: any) =>
        x.nodeId === "n1" && x.dimension === "RESOURCE_DIMENSION_CPU" && x.signal === "FORECAST_SIGNAL_RESERVATION",
    );
    // 50 m per step of 2000 m: the limit is 40 steps away, later than memory.
    expect(Date.parse(cpu.exhaustedAt)).toBeGreaterThan(Date.parse(cluster.exhaustedAt));
  });

  it("answers NOT_FOUND for an unknown node and INVALID_ARGUMENT for a bad window", async () => {
    expect((await h.rest("GET", "/v1/forecast?nodeId=nope")).body.code).toBe("NOT_FOUND");
    const bad = await h.rest("GET", "/v1/forecast?windowSeconds=99999999");
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe("windowSeconds");
  });
});
