import { api } from "@persys/schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameReplicaReport } from "./report-mapping.js";

/** What a heartbeat's report is compared by: its canonical JSON without the per-heartbeat fields. */
function canonicalJson(report: api.ReplicaReport): string {
  return JSON.stringify(
    api.ReplicaReport.toJSON({ ...report, cpuMillicoresUsed: 0, memoryBytesUsed: 0, lastTransitionAt: undefined }),
  );
}

const date = fc.constantFrom(new Date(0), new Date(1_700_000_000_000), new Date(1_700_000_000_001));
const reason = fc.record({
  code: fc.constantFrom(api.ErrorCode.ERROR_CODE_UNSPECIFIED, api.ErrorCode.IMAGE_NOT_FOUND),
  message: fc.constantFrom("", "pull failed"),
  retryable: fc.boolean(),
  nextRetryAt: fc.option(date, { nil: undefined }),
  attempts: fc.constantFrom(0, 2),
  since: fc.option(date, { nil: undefined }),
});
const endpoint = fc.record({
  kind: fc.constantFrom(api.EndpointKind.ENDPOINT_KIND_UNSPECIFIED, api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT),
  address: fc.constantFrom("", "127.0.0.1"),
  port: fc.constantFrom(0, 8080),
  targetPort: fc.constantFrom(0, 80),
  protocol: fc.constantFrom(api.Protocol.PROTOCOL_UNSPECIFIED, api.Protocol.PROTOCOL_TCP),
  network: fc.constantFrom("", "web"),
});
const report: fc.Arbitrary<api.ReplicaReport> = fc.record({
  workloadId: fc.constantFrom("web", "db"),
  replicaIndex: fc.constantFrom(0, 1),
  state: fc.constantFrom(api.ReplicaState.REPLICA_STATE_RUNNING, api.ReplicaState.REPLICA_STATE_FAILED),
  reason: fc.option(reason, { nil: undefined }),
  endpoints: fc.array(endpoint, { maxLength: 2 }),
  observedRevision: fc.constantFrom("", "r1"),
  assignmentGeneration: fc.constantFrom(0, 7),
  restartCount: fc.constantFrom(0, 1),
  startedAt: fc.option(date, { nil: undefined }),
  lastTransitionAt: fc.option(date, { nil: undefined }),
  cpuMillicoresUsed: fc.constantFrom(0, 250),
  memoryBytesUsed: fc.constantFrom(0, 1 << 20),
  runtimeId: fc.constantFrom("", "c0ffee"),
  services: fc.constant([]),
  sourceCommit: fc.constantFrom("", "abc123"),
});

describe("sameReplicaReport", () => {
  it("agrees with comparing canonical JSON for any two reports", () => {
    fc.assert(
      fc.property(report, report, (a, b) => {
        expect(sameReplicaReport(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
      }),
      { numRuns: 2_000 },
    );
  });

  it("finds a report equal to itself after a trip through the stored JSON form", () => {
    fc.assert(
      fc.property(report, (r) => {
        expect(sameReplicaReport(api.ReplicaReport.fromJSON(api.ReplicaReport.toJSON(r)), r)).toBe(true);
      }),
    );
  });

  it("ignores measured use and the transition time, and nothing else", () => {
    const base = api.ReplicaReport.fromPartial({ workloadId: "web", state: api.ReplicaState.REPLICA_STATE_RUNNING });
    const busier = { ...base, cpuMillicoresUsed: 900, memoryBytesUsed: 5, lastTransitionAt: new Date() };
    expect(sameReplicaReport(base, busier)).toBe(true);
    expect(sameReplicaReport(base, { ...base, restartCount: 1 })).toBe(false);
    expect(sameReplicaReport(base, { ...base, startedAt: new Date(5) })).toBe(false);
    expect(sameReplicaReport({ ...base, startedAt: new Date(5) }, { ...base, startedAt: new Date(5) })).toBe(true);
  });
});
