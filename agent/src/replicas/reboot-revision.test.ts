import { describe, expect, it } from "vitest";
import { type DesiredReplica, isRebootOnly, rebootsOf, runtimeRevision } from "./desired-replica.js";

const replica = (revision: string, extra: Partial<DesiredReplica> = {}): DesiredReplica =>
  ({
    id: "db-0",
    workloadId: "db",
    index: 0,
    generation: 1,
    revision,
    desired: "running",
    resources: { cpuMillicores: 0, memoryMib: 0, diskGib: 0 },
    source: "persys",
    kind: "vm",
    spec: {},
    ...extra,
  }) as DesiredReplica;

describe("reboot suffix of agent revisions", () => {
  it.each([
    ["no suffix", "3f2a", "3f2a", 0],
    ["reboot", "3f2a+b2", "3f2a", 2],
    ["recreate and reboot", "3f2a-r1.0+b3", "3f2a-r1.0", 3],
    ["not a reboot suffix", "3f2a+bx", "3f2a+bx", 0],
  ])("%s", (_name, revision, runtime, reboots) => {
    expect(runtimeRevision(revision)).toBe(runtime);
    expect(rebootsOf(revision)).toBe(reboots);
  });
});

describe("isRebootOnly", () => {
  it.each([
    ["first reboot", replica("a"), replica("a+b1"), true],
    ["next reboot", replica("a+b1"), replica("a+b2"), true],
    ["same revision", replica("a+b1"), replica("a+b1"), false],
    ["new spec revision", replica("a+b1"), replica("b+b2"), false],
    ["recreate and reboot counters both changed", replica("a+b1"), replica("a-r1.0+b2"), false],
    ["desired stopped", replica("a"), replica("a+b1", { desired: "stopped" }), false],
    ["currently stopped", replica("a", { desired: "stopped" }), replica("a+b1"), false],
    ["a Go scheduler's request", replica("a"), replica("a+b1", { source: "go" }), false],
  ])("%s", (_name, current, next, expected) => {
    expect(isRebootOnly(current, next)).toBe(expected);
  });
});
