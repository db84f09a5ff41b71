import { describe, expect, it } from "vitest";
import { HostUsageSampler, measureCapacity, reportedResources } from "./host-resources.js";

const measured = { cpuMillicores: 4000, memoryMib: 8192, diskGib: 100 };
const reserve = { cpuMillicores: 100, memoryMib: 256, diskGib: 2 };

describe("reportedResources", () => {
  it.each([
    {
      name: "measured capacity minus the reserve",
      configured: { capacity: {}, allocatable: {} },
      want: { capacity: measured, allocatable: { cpuMillicores: 3900, memoryMib: 7936, diskGib: 98 } },
    },
    {
      name: "configured capacity wins per dimension",
      configured: { capacity: { cpuMillicores: 1000 }, allocatable: {} },
      want: {
        capacity: { ...measured, cpuMillicores: 1000 },
        allocatable: { cpuMillicores: 900, memoryMib: 7936, diskGib: 98 },
      },
    },
    {
      name: "configured allocatable is capped at capacity",
      configured: { capacity: {}, allocatable: { memoryMib: 99_999, diskGib: 10 } },
      want: { capacity: measured, allocatable: { cpuMillicores: 3900, memoryMib: 8192, diskGib: 10 } },
    },
    {
      name: "a reserve larger than capacity gives zero",
      configured: { capacity: { cpuMillicores: 50 }, allocatable: {} },
      want: {
        capacity: { ...measured, cpuMillicores: 50 },
        allocatable: { cpuMillicores: 0, memoryMib: 7936, diskGib: 98 },
      },
    },
  ])("$name", ({ configured, want }) => {
    expect(reportedResources(measured, { ...configured, reserve })).toEqual(want);
  });
});

describe("host measurement", () => {
  it("measures this host: CPUs, RAM and the file system of a path", () => {
    const c = measureCapacity("/");
    expect(c.cpuMillicores).toBeGreaterThanOrEqual(1000);
    expect(c.cpuMillicores % 1000).toBe(0);
    expect(c.memoryMib).toBeGreaterThan(64);
    expect(c.diskGib).toBeGreaterThan(0);
    const usage = new HostUsageSampler("/").sample();
    expect(usage.memoryMib).toBeGreaterThan(0);
    expect(usage.memoryMib).toBeLessThanOrEqual(c.memoryMib);
    expect(usage.diskPercent).toBeGreaterThan(0);
    expect(usage.cpuPercent).toBeGreaterThanOrEqual(0);
    expect(usage.cpuPercent).toBeLessThanOrEqual(100);
  });
});
