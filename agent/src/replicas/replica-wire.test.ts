import { agent, api, control } from "@persys/schema";
import { describe, expect, it } from "vitest";
import {
  agentWorkloadStatus,
  goWorkloadStatus,
  type ObservedReplica,
  type ReplicaIdentity,
  replicaReport,
} from "./replica-wire.js";

const d: ReplicaIdentity = {
  id: "web-1",
  workloadId: "web",
  index: 1,
  generation: 9,
  revision: "r2",
  desired: "running",
};
const at = new Date("2026-01-01T00:00:00Z");
const observed = (o: Partial<ObservedReplica>): ObservedReplica => ({
  state: "RUNNING",
  containerId: "abc123",
  observedRevision: "r2",
  restartCount: 2,
  startedAt: at,
  lastTransitionAt: at,
  ports: [
    { containerPort: 8080, protocol: "tcp", hostIp: "0.0.0.0", hostPort: 18080 },
    { containerPort: 53, protocol: "udp", hostIp: "127.0.0.1", hostPort: 5353 },
  ],
  cpuMillicores: 120,
  memoryBytes: 5_000_000,
  createdAt: at,
  ...o,
});

describe("replica wire forms", () => {
  it("reports a running replica with endpoints on the node address, usage and identity", () => {
    expect(replicaReport(d, observed({}), "10.0.0.5")).toEqual({
      workloadId: "web",
      replicaIndex: 1,
      state: api.ReplicaState.REPLICA_STATE_RUNNING,
      reason: undefined,
      endpoints: [
        {
          kind: api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT,
          address: "10.0.0.5",
          port: 18080,
          targetPort: 8080,
          protocol: api.Protocol.PROTOCOL_TCP,
          network: "",
        },
        {
          kind: api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT,
          address: "127.0.0.1",
          port: 5353,
          targetPort: 53,
          protocol: api.Protocol.PROTOCOL_UDP,
          network: "",
        },
      ],
      observedRevision: "r2",
      assignmentGeneration: 9,
      restartCount: 2,
      startedAt: at,
      lastTransitionAt: at,
      cpuMillicoresUsed: 120,
      memoryBytesUsed: 5_000_000,
      runtimeId: "abc123",
      services: [],
      sourceCommit: "",
    });
  });

  it.each([
    { state: "STARTING" as const, go: "Pending", actual: agent.ActualState.ACTUAL_STATE_PENDING },
    { state: "RUNNING" as const, go: "Running", actual: agent.ActualState.ACTUAL_STATE_RUNNING },
    { state: "STOPPED" as const, go: "Stopped", actual: agent.ActualState.ACTUAL_STATE_STOPPED },
    { state: "FAILED" as const, go: "Failed", actual: agent.ActualState.ACTUAL_STATE_FAILED },
  ])("$state is $go for Go schedulers", ({ state, go, actual }) => {
    expect(goWorkloadStatus(d, observed({ state })).state).toBe(go);
    expect(agentWorkloadStatus(d, observed({ state }), "h").actualState).toBe(actual);
  });

  it.each([
    { code: "IMAGE_NOT_FOUND" as const, go: control.FailureReason.IMAGE_NOT_FOUND },
    { code: "IMAGE_PULL_FAILED" as const, go: control.FailureReason.IMAGE_PULL_FAILED },
    { code: "PORT_CONFLICT" as const, go: control.FailureReason.RUNTIME_ERROR },
    { code: "CONTAINER_EXITED" as const, go: control.FailureReason.RUNTIME_ERROR },
  ])("a failure $code maps to the Go FailureReason the Go enum has", ({ code, go }) => {
    const o = observed({ state: "FAILED", reason: { code, message: "why", retryable: false } });
    expect(goWorkloadStatus(d, o)).toMatchObject({
      workloadId: "web-1",
      failureReason: go,
      message: "why",
      reason: { code, message: "why", retryable: false },
    });
    expect(agentWorkloadStatus(d, o, "h").metadata).toMatchObject({
      failure_reason: code,
      failure_message: "why",
      retryable: "false",
      retry_terminal: "true",
      "container.id": "abc123",
    });
  });

  it("sends no usage and no endpoints for a stopped replica", () => {
    const o = observed({ state: "STOPPED" });
    expect(replicaReport(d, o, "h")).toMatchObject({ endpoints: [], cpuMillicoresUsed: 0, memoryBytesUsed: 0 });
    expect(goWorkloadStatus(d, o).usage).toBeUndefined();
  });
});
