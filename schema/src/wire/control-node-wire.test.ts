// Wire fixtures for persys.control.v1 node traffic (registration, heartbeats, node views), built by
// hand from the field numbers of the fact sheet (never with the generated encoder) and decoded with
// the generated code. These are the bytes a Go compute-agent or gateway puts on the wire.
import { describe, expect, it } from "vitest";
import { control } from "../index.js";
import {
  concat,
  doubleField,
  hex,
  mapEntry,
  messageField,
  stringField,
  timestampField,
  varintField,
} from "./test-support/hand-wire.js";

const T0 = 1_764_600_000; // 2025-12-01T14:40:00Z
const at = (seconds: number, millis = 0) => new Date(seconds * 1000 + millis);
describe("control RegisterNodeRequest", () => {
  const capabilities = messageField(
    2,
    varintField(1, 16_000), // cpu_total_millicores
    varintField(2, 65_536), // memory_total_mb
    messageField(3, stringField(1, "default"), stringField(2, "dir"), varintField(3, 500)), // storage_pools
    messageField(3, stringField(1, "fast"), stringField(2, "lvm"), varintField(3, 6_000_000_000)),
    stringField(4, "container"), // supported_workload_types
    stringField(4, "vm"),
    stringField(5, "local"), // supported_storage_drivers
    stringField(5, "ceph-rbd"),
  );
  const records = [
    stringField(1, "node-a"), // node_id
    capabilities,
    mapEntry(3, "zone", "eu-1"), // labels
    mapEntry(3, "persys.io/arch", "amd64"),
    stringField(4, "1.4.2"), // agent_version
    stringField(5, "10.0.0.5:50051"), // grpc_endpoint
    stringField(6, "prod"), // cluster_id
    timestampField(7, T0, 250_000_000), // timestamp
  ];
  const expected: control.RegisterNodeRequest = {
    nodeId: "node-a",
    capabilities: {
      cpuTotalMillicores: 16_000,
      memoryTotalMb: 65_536,
      storagePools: [
        { name: "default", type: "dir", totalGb: 500 },
        { name: "fast", type: "lvm", totalGb: 6_000_000_000 },
      ],
      supportedWorkloadTypes: ["container", "vm"],
      supportedStorageDrivers: ["local", "ceph-rbd"],
    },
    labels: { zone: "eu-1", "persys.io/arch": "amd64" },
    agentVersion: "1.4.2",
    grpcEndpoint: "10.0.0.5:50051",
    clusterId: "prod",
    timestamp: at(T0, 250),
  };

  it.each([
    { name: "fields in number order (as Go writes them)", bytes: concat(...records) },
    { name: "fields in reverse order", bytes: concat(...[...records].reverse()) },
  ])("decodes every field: $name", ({ bytes }) => {
    const decoded = control.RegisterNodeRequest.decode(bytes);
    expect(decoded).toEqual(expected);
    expect(decoded.labels).toEqual(expected.labels);
  });

  it("decodes an empty message to proto3 defaults", () => {
    expect(control.RegisterNodeRequest.decode(new Uint8Array())).toEqual({
      nodeId: "",
      labels: {},
      agentVersion: "",
      grpcEndpoint: "",
      clusterId: "",
    });
  });
});

describe("control HeartbeatRequest", () => {
  const bytes = concat(
    stringField(1, "node-a"),
    messageField(
      2, // usage
      varintField(1, 4_000),
      varintField(2, 1_250),
      varintField(3, 8_192),
      varintField(4, 3_100),
      varintField(5, 40),
      varintField(6, 12),
    ),
    messageField(
      3, // workload_statuses
      stringField(1, "web"),
      stringField(2, "Failed"),
      varintField(3, 1), // failure_reason IMAGE_PULL_FAILED
      stringField(4, "pull access denied"),
      timestampField(5, T0 - 30),
      messageField(
        6, // reason
        stringField(1, "IMAGE_PULL_FAILED"),
        stringField(2, "registry unreachable"),
        timestampField(3, T0 - 30),
        timestampField(4, T0 + 60),
        varintField(5, true),
      ),
    ),
    timestampField(4, T0),
    messageField(
      5, // workload_usage
      stringField(1, "db"),
      stringField(2, "container"),
      doubleField(3, 12.75), // cpu_percent
      varintField(4, 5_000_000_000), // memory_bytes, beyond 32 bits
      varintField(5, 1_024),
      varintField(6, 2_048),
      varintField(7, 300),
      varintField(8, 400),
      timestampField(9, T0 - 5),
      stringField(10, "docker"),
    ),
  );

  it("decodes usage, statuses with their reason, and usage snapshots with a double", () => {
    expect(control.HeartbeatRequest.decode(bytes)).toEqual({
      nodeId: "node-a",
      usage: {
        cpuAllocatedMillicores: 4_000,
        cpuUsedMillicores: 1_250,
        memoryAllocatedMb: 8_192,
        memoryUsedMb: 3_100,
        diskAllocatedGb: 40,
        diskUsedGb: 12,
      },
      workloadStatuses: [
        {
          workloadId: "web",
          state: "Failed",
          failureReason: control.FailureReason.IMAGE_PULL_FAILED,
          message: "pull access denied",
          lastTransition: at(T0 - 30),
          reason: {
            code: "IMAGE_PULL_FAILED",
            message: "registry unreachable",
            lastTransition: at(T0 - 30),
            nextRetryAt: at(T0 + 60),
            retryable: true,
          },
        },
      ],
      timestamp: at(T0),
      workloadUsage: [
        {
          workloadId: "db",
          type: "container",
          cpuPercent: 12.75,
          memoryBytes: 5_000_000_000,
          diskReadBytes: 1_024,
          diskWriteBytes: 2_048,
          netRxBytes: 300,
          netTxBytes: 400,
          collectedAt: at(T0 - 5),
          source: "docker",
        },
      ],
      // Persys extension fields (numbers >= 1000): absent on the wire from a Go agent.
      persysReplicas: [],
    } satisfies control.HeartbeatRequest);
  });
});
describe("control NodeView", () => {
  it("decodes doubles (8, 9), int64s, timestamps, repeated strings and labels", () => {
    const bytes = concat(
      stringField(1, "node-a"),
      stringField(2, "Ready"),
      stringField(3, "heartbeat ok"),
      stringField(4, "heartbeat"),
      timestampField(5, T0 - 60),
      timestampField(6, T0),
      stringField(7, "10.0.0.5:50051"),
      doubleField(8, 16),
      doubleField(9, 3.25),
      varintField(10, 65_536),
      varintField(11, 12_345),
      stringField(12, "container"),
      stringField(12, "compose"),
      mapEntry(13, "zone", "eu-1"),
    );
    const decoded = control.GetNodeResponse.decode(messageField(1, bytes));
    expect(decoded).toEqual({
      node: {
        nodeId: "node-a",
        status: "Ready",
        statusReason: "heartbeat ok",
        statusUpdatedBy: "heartbeat",
        statusUpdatedAt: at(T0 - 60),
        lastHeartbeat: at(T0),
        grpcEndpoint: "10.0.0.5:50051",
        totalCpuCores: 16,
        availableCpuCores: 3.25,
        totalMemoryMb: 65_536,
        availableMemoryMb: 12_345,
        supportedWorkloadTypes: ["container", "compose"],
        labels: { zone: "eu-1" },
      },
    } satisfies control.GetNodeResponse);
  });
});

describe("control enums are open", () => {
  it("keeps an unknown FailureReason number through decode and encode", () => {
    const bytes = concat(varintField(2, 99), stringField(3, "from a newer scheduler"));
    const decoded = control.ApplyWorkloadResponse.decode(bytes);
    expect(decoded.failureReason).toBe(99);
    expect(hex(control.ApplyWorkloadResponse.encode(decoded).finish())).toBe(hex(bytes));
  });
});

describe("control messages our control plane sends to Go agents", () => {
  const cases: { name: string; encoded: () => Uint8Array; bytes: Uint8Array }[] = [
    {
      name: "RegisterNodeResponse",
      encoded: () =>
        control.RegisterNodeResponse.encode({
          accepted: true,
          reason: "",
          heartbeatIntervalSeconds: 10,
          leaseExpiresAt: at(T0 + 30, 500),
        }).finish(),
      bytes: concat(varintField(1, true), varintField(3, 10), timestampField(4, T0 + 30, 500_000_000)),
    },
    {
      name: "RegisterNodeResponse (refused)",
      encoded: () =>
        control.RegisterNodeResponse.encode({
          accepted: false,
          reason: "grpc_endpoint must be host:port",
          heartbeatIntervalSeconds: 0,
        }).finish(),
      bytes: concat(stringField(2, "grpc_endpoint must be host:port")),
    },
    {
      name: "HeartbeatResponse",
      encoded: () =>
        control.HeartbeatResponse.encode({ acknowledged: true, drainNode: true, leaseExpiresAt: at(T0 + 30) }).finish(),
      bytes: concat(varintField(1, true), varintField(2, true), timestampField(3, T0 + 30)),
    },
  ];

  it.each(cases)("$name matches the hand-built bytes", ({ encoded, bytes }) => {
    expect(hex(encoded())).toBe(hex(bytes));
  });
});
