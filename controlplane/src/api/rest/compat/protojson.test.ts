import { control } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { loadSchemaCatalog } from "../json-schemas.js";
import { fromProtoJson, ProtoJsonError, toProtoNames } from "./protojson.js";

const catalog = loadSchemaCatalog();
const apply = "persys.control.v1.ApplyWorkloadRequest";

describe("toProtoNames (protojson, UseProtoNames)", () => {
  it.each([
    {
      name: "snake_case names, int64 as strings, Timestamps without .000",
      message: "persys.control.v1.WorkloadUsageSnapshot",
      value: control.WorkloadUsageSnapshot.fromPartial({
        workloadId: "w",
        memoryBytes: 5,
        cpuPercent: 1.5,
        collectedAt: new Date("2025-01-01T00:00:00.000Z"),
      }),
      want: { workload_id: "w", memory_bytes: "5", cpu_percent: 1.5, collected_at: "2025-01-01T00:00:00Z" },
    },
    {
      name: "milliseconds are kept",
      message: "persys.control.v1.WorkloadUsageSnapshot",
      value: control.WorkloadUsageSnapshot.fromPartial({ collectedAt: new Date("2025-01-01T00:00:00.120Z") }),
      want: { collected_at: "2025-01-01T00:00:00.120Z" },
    },
    {
      name: "map keys are never renamed; nested messages are",
      message: "persys.control.v1.WorkloadSpec",
      value: control.WorkloadSpec.fromPartial({
        type: "vm",
        metadata: { someKey: "v", other_key: "w" },
        workload: { $case: "vm", value: { memoryMb: 2048, cloudInit: { userData: "#cloud-config" } } },
      }),
      want: {
        type: "vm",
        metadata: { someKey: "v", other_key: "w" },
        vm: { memory_mb: "2048", cloud_init: { user_data: "#cloud-config" } },
      },
    },
    {
      name: "enums are names; defaults are omitted",
      message: "persys.control.v1.ApplyWorkloadResponse",
      value: control.ApplyWorkloadResponse.fromPartial({ failureReason: control.FailureReason.VM_BOOT_FAILED }),
      want: { failure_reason: "VM_BOOT_FAILED" },
    },
  ])("$name", ({ message, value, want }) => {
    const codec = (control as unknown as Record<string, { toJSON(v: unknown): unknown }>)[message.split(".").at(-1)!]!;
    expect(toProtoNames(catalog, message, codec.toJSON(value))).toEqual(want);
  });

  it("writes non-finite doubles as protojson does", () => {
    expect(toProtoNames(catalog, "persys.control.v1.NodeView", { totalCpuCores: Number.POSITIVE_INFINITY })).toEqual({
      total_cpu_cores: "Infinity",
    });
  });
});

describe("fromProtoJson (protojson, DiscardUnknown)", () => {
  it.each([
    { name: "proto names", input: { workload_id: "w", revision_id: "r" }, want: { workloadId: "w", revisionId: "r" } },
    { name: "JSON names", input: { workloadId: "w" }, want: { workloadId: "w" } },
    { name: "unknown keys are dropped", input: { workload_id: "w", extra: { deep: 1 } }, want: { workloadId: "w" } },
    { name: "null is unset", input: { workload_id: null, spec: null }, want: {} },
    {
      name: "int64 from numbers and strings, int32 from strings",
      input: {
        spec: { resources: { cpu_millicores: 500, memory_mb: "256" }, container: { ports: [{ host_port: "80" }] } },
      },
      want: {
        spec: { resources: { cpuMillicores: "500", memoryMb: "256" }, container: { ports: [{ hostPort: 80 }] } },
      },
    },
    { name: "an unknown enum name is dropped", input: { spec: { type: "vm" } }, want: { spec: { type: "vm" } } },
  ])("$name", ({ input, want }) => {
    expect(fromProtoJson(catalog, apply, input)).toEqual(want);
  });

  it("decodes into what ts-proto fromJSON turns into the message", () => {
    const json = fromProtoJson(catalog, apply, {
      workload_id: "w",
      spec: { type: "container", container: { image: "nginx" } },
    });
    expect(control.ApplyWorkloadRequest.fromJSON(json)).toEqual(
      control.ApplyWorkloadRequest.fromPartial({
        workloadId: "w",
        spec: { type: "container", workload: { $case: "container", value: { image: "nginx" } } },
      }),
    );
  });

  it.each([
    {
      name: "a number for a string",
      input: { workload_id: 5 },
      error: "invalid value for string field workload_id: 5",
    },
    {
      name: "a string for a bool",
      input: { spec: { container: { privileged: "yes" } } },
      error: 'invalid value for bool field privileged: "yes"',
    },
    {
      name: "a fraction for an int32",
      input: { spec: { container: { ports: [{ host_port: 1.5 }] } } },
      error: "invalid value for int32 field host_port: 1.5",
    },
    {
      name: "an int32 out of range",
      input: { spec: { container: { ports: [{ host_port: 2 ** 31 }] } } },
      error: "invalid value for int32 field host_port: 2147483648",
    },
    {
      name: "an object for a list",
      input: { spec: { container: { command: {} } } },
      error: "invalid value for list field command: {}",
    },
    { name: "a list for a map", input: { spec: { metadata: [] } }, error: "invalid value for map field metadata: []" },
    {
      name: "a oneof set twice",
      input: { spec: { container: {}, compose: {} } },
      error: "error parsing compose, oneof workload is already set (container)",
    },
    {
      name: "both names of one field",
      input: { workload_id: "a", workloadId: "b" },
      error: "duplicate field workload_id",
    },
    {
      name: "a bad timestamp",
      input: { timestamp: "yesterday" },
      error: 'invalid value for google.protobuf.Timestamp field timestamp: "yesterday"',
      message: "persys.control.v1.RegisterNodeRequest",
    },
  ])("refuses $name", ({ input, error, message }) => {
    expect(() => fromProtoJson(catalog, message ?? apply, input)).toThrow(new ProtoJsonError(error));
  });
});
