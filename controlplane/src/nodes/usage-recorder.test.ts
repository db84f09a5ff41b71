import { describe, expect, it } from "vitest";
import type { EventStore } from "../events/event-store.js";
import { UsageRecorder } from "./usage-recorder.js";

/** An event store that only collects the samples written to it. */
function sampleSink() {
  const samples: Array<{ series: string; at: number; resolutionMs: number | undefined }> = [];
  const store = {
    addSample: async (series: string, at: number, _value: number, options?: { resolutionMs?: number }) => {
      samples.push({ series, at, resolutionMs: options?.resolutionMs });
    },
  } as unknown as EventStore;
  return { store, samples };
}

/** Ten nodes heartbeating every second for `seconds`: 30 node series. */
function heartbeat(recorder: UsageRecorder, seconds: number): void {
  for (let t = 1; t <= seconds; t++) {
    for (let n = 0; n < 10; n++) {
      recorder.recordNode(`node-${n}`, { at: t * 1000, cpuMillicores: 100, memoryMib: 64, diskGib: 1 });
    }
  }
}

describe("UsageRecorder", () => {
  it("writes one point per series per resolution when the series fit the budget", () => {
    const { store, samples } = sampleSink();
    heartbeat(new UsageRecorder(store, 1_000, 1_000), 20);
    expect(samples).toHaveLength(30 * 20);
  });

  it("coarsens the resolution so the series keep within the points-per-second budget", () => {
    const { store, samples } = sampleSink();
    const recorder = new UsageRecorder(store, 1_000, 2);
    heartbeat(recorder, 120);
    // 30 series at 2 points a second: one point per series every 15 s.
    expect(recorder.currentResolutionMs).toBe(15_000);
    const lastMinute = samples.filter((s) => s.at > 60_000);
    expect(lastMinute.length / 60).toBeLessThanOrEqual(2);
    expect(new Set(lastMinute.map((s) => s.series)).size).toBe(30);
    expect(lastMinute.every((s) => s.resolutionMs === 15_000)).toBe(true);
  });
});
