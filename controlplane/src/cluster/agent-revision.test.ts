import { describe, expect, it } from "vitest";
import { agentRevisionOf, rebootGenerationOf, splitAgentRevision, type WorkloadRecord } from "./records.js";

const record = (extra: Partial<WorkloadRecord>): WorkloadRecord => ({
  workload: {},
  revision: "3f2a",
  generation: 1,
  createdAt: "",
  updatedAt: "",
  ...extra,
});

describe("agent revisions: restart (recreate) and reboot counters", () => {
  it.each([
    ["never restarted", {}, 0, "3f2a", 0],
    ["restarted (recreate)", { restartNonce: 1 }, 0, "3f2a-r1.0", 0],
    ["rebooted, every replica", { rebootNonce: 2 }, 0, "3f2a+b2", 2],
    ["rebooted, this replica", { replicaRebootNonces: { "1": 1 } }, 1, "3f2a+b1", 1],
    ["rebooted, another replica", { replicaRebootNonces: { "1": 1 } }, 0, "3f2a", 0],
    ["recreated then rebooted", { restartNonce: 1, rebootNonce: 1 }, 0, "3f2a-r1.0+b1", 1],
  ])("%s", (_name, extra, index, revision, reboots) => {
    const r = record(extra);
    expect(agentRevisionOf(r, { index })).toBe(revision);
    expect(rebootGenerationOf(r, { index })).toBe(reboots);
    expect(splitAgentRevision(revision)).toEqual({ recreate: revision.replace(/\+b\d+$/, ""), reboots });
  });
});
