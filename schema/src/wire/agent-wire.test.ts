// Wire fixtures for persys.agent.v1, built by hand from the field numbers of the fact sheet (never
// with the generated encoder). The Go scheduler sends the requests; our agent must read them and
// answer with bytes the Go scheduler reads.
import { describe, expect, it } from "vitest";
import { agent } from "../index.js";
import {
  concat,
  doubleField,
  hex,
  mapEntry,
  messageField,
  stringField,
  varintField,
} from "./test-support/hand-wire.js";

const CREATED = 1_764_600_000; // Unix seconds, fits in 31 bits
const UPDATED = 4_102_444_800; // 2100-01-01, needs more than 32 bits

const emptyContainer: agent.ContainerSpec = {
  image: "",
  command: [],
  args: [],
  env: {},
  volumes: [],
  ports: [],
  labels: {},
  managedVolumes: [],
};

describe("agent ContainerSpec", () => {
  it("reads field 3 as args (repeated string), not env", () => {
    const decoded = agent.ContainerSpec.decode(concat(stringField(3, "--port"), stringField(3, "8080")));
    expect(decoded).toEqual({ ...emptyContainer, args: ["--port", "8080"] });
  });

  it("decodes every field, including a negative int64 (memory_swap_bytes = -1)", () => {
    const bytes = concat(
      stringField(1, "redis:7"),
      stringField(2, "redis-server"), // command
      stringField(3, "--appendonly"), // args
      stringField(3, "yes"),
      mapEntry(4, "TZ", "UTC"), // env
      messageField(5, stringField(1, "/var/lib/redis"), stringField(2, "/data")), // volumes
      messageField(6, varintField(1, 6379), varintField(2, 6379), stringField(3, "tcp")), // ports
      messageField(7, varintField(1, 512), varintField(2, 268_435_456), varintField(3, -1)), // resources
      messageField(8, stringField(1, "on-failure"), varintField(2, 5)), // restart_policy
      mapEntry(9, "persys.workload", "cache"), // labels
      messageField(10, stringField(1, "cache-data"), stringField(2, "local"), varintField(3, 1)), // managed_volumes
    );
    expect(agent.ContainerSpec.decode(bytes)).toEqual({
      image: "redis:7",
      command: ["redis-server"],
      args: ["--appendonly", "yes"],
      env: { TZ: "UTC" },
      volumes: [{ hostPath: "/var/lib/redis", containerPath: "/data", readOnly: false }],
      ports: [{ hostPort: 6379, containerPort: 6379, protocol: "tcp" }],
      resources: { cpuShares: 512, memoryBytes: 268_435_456, memorySwapBytes: -1 },
      restartPolicy: { policy: "on-failure", maxRetryCount: 5 },
      labels: { "persys.workload": "cache" },
      managedVolumes: [
        {
          name: "cache-data",
          driver: "local",
          sizeGb: 1,
          accessMode: "",
          fsType: "",
          mountPath: "",
          readOnly: false,
          retainPolicy: "",
        },
      ],
    } satisfies agent.ContainerSpec);
  });
});

describe("agent ApplyWorkloadRequest with WorkloadSpec oneof spec (members 1, 2, 3)", () => {
  const cases: {
    name: string;
    type: agent.WorkloadType;
    spec: Uint8Array;
    expected: agent.WorkloadSpec["spec"];
  }[] = [
    {
      name: "container = 1",
      type: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
      spec: messageField(1, stringField(1, "nginx:1.27"), stringField(3, "-g")),
      expected: { $case: "container", value: { ...emptyContainer, image: "nginx:1.27", args: ["-g"] } },
    },
    {
      name: "compose = 2",
      type: agent.WorkloadType.WORKLOAD_TYPE_COMPOSE,
      spec: messageField(2, stringField(1, "shop"), stringField(2, "c2VydmljZXM6IHt9"), mapEntry(3, "TAG", "v2")),
      expected: {
        $case: "compose",
        value: { projectName: "shop", composeYaml: "c2VydmljZXM6IHt9", env: { TAG: "v2" } },
      },
    },
    {
      name: "vm = 3",
      type: agent.WorkloadType.WORKLOAD_TYPE_VM,
      spec: messageField(
        3,
        stringField(1, "vm1"),
        varintField(2, 2), // vcpus
        varintField(3, 2_048), // memory_mb
        messageField(
          4, // disks
          stringField(1, "/var/lib/libvirt/images/vm1-vda.qcow2"),
          stringField(2, "vda"),
          stringField(3, "qcow2"),
          varintField(4, 20),
          stringField(5, "disk"),
          varintField(6, true),
        ),
        messageField(5, stringField(1, "default"), stringField(2, "52:54:00:12:34:56"), stringField(3, "10.0.0.9")),
        stringField(6, "#cloud-config\n"), // cloud_init (string)
        mapEntry(7, "persys.node", "node-a"), // metadata
        messageField(8, stringField(1, "#cloud-config\n"), stringField(2, "instance-id: vm1\n")), // cloud_init_config
        messageField(9, stringField(1, "scratch"), varintField(3, 5)), // managed_volumes
      ),
      expected: {
        $case: "vm",
        value: {
          name: "vm1",
          vcpus: 2,
          memoryMb: 2_048,
          disks: [
            {
              path: "/var/lib/libvirt/images/vm1-vda.qcow2",
              device: "vda",
              format: "qcow2",
              sizeGb: 20,
              type: "disk",
              boot: true,
            },
          ],
          networks: [{ network: "default", macAddress: "52:54:00:12:34:56", ipAddress: "10.0.0.9" }],
          cloudInit: "#cloud-config\n",
          metadata: { "persys.node": "node-a" },
          cloudInitConfig: {
            userData: "#cloud-config\n",
            metaData: "instance-id: vm1\n",
            networkConfig: "",
            vendorData: "",
          },
          managedVolumes: [
            {
              name: "scratch",
              driver: "",
              sizeGb: 5,
              accessMode: "",
              fsType: "",
              mountPath: "",
              readOnly: false,
              retainPolicy: "",
            },
          ],
        },
      },
    },
  ];

  it.each(cases)("decodes $name with the request's enums", ({ type, spec, expected }) => {
    const bytes = concat(
      stringField(1, "web"),
      varintField(2, type),
      stringField(3, "rev-3f2a"),
      varintField(4, 2), // DESIRED_STATE_STOPPED
      messageField(5, spec),
    );
    expect(agent.ApplyWorkloadRequest.decode(bytes)).toEqual({
      id: "web",
      type,
      revisionId: "rev-3f2a",
      desiredState: agent.DesiredState.DESIRED_STATE_STOPPED,
      spec: { spec: expected },
    } satisfies agent.ApplyWorkloadRequest);
  });
});

describe("agent WorkloadStatus", () => {
  const statusBytes = concat(
    stringField(1, "vm1"),
    varintField(2, 3), // WORKLOAD_TYPE_VM
    stringField(3, "rev-3f2a"),
    varintField(4, 1), // DESIRED_STATE_RUNNING
    varintField(5, 2), // ACTUAL_STATE_RUNNING
    stringField(6, "running"),
    varintField(7, CREATED),
    varintField(8, UPDATED),
    mapEntry(9, "vm.primary_ip", "10.0.0.9"),
    messageField(
      10, // usage
      stringField(1, "vm1"),
      varintField(2, 3),
      doubleField(3, 37.5),
      varintField(4, 1_073_741_824),
      varintField(5, 10),
      varintField(6, 20),
      varintField(7, 30),
      varintField(8, 40),
      varintField(9, UPDATED), // collected_at, Unix seconds
      stringField(10, "libvirt"),
    ),
  );
  const status: agent.WorkloadStatus = {
    id: "vm1",
    type: agent.WorkloadType.WORKLOAD_TYPE_VM,
    revisionId: "rev-3f2a",
    desiredState: agent.DesiredState.DESIRED_STATE_RUNNING,
    actualState: agent.ActualState.ACTUAL_STATE_RUNNING,
    message: "running",
    createdAt: CREATED,
    updatedAt: UPDATED,
    metadata: { "vm.primary_ip": "10.0.0.9" },
    usage: {
      workloadId: "vm1",
      type: agent.WorkloadType.WORKLOAD_TYPE_VM,
      cpuPercent: 37.5,
      memoryBytes: 1_073_741_824,
      diskReadBytes: 10,
      diskWriteBytes: 20,
      netRxBytes: 30,
      netTxBytes: 40,
      collectedAt: UPDATED,
      source: "libvirt",
    },
  };

  it("decodes enum fields and int64 Unix-second timestamps as numbers", () => {
    expect(agent.WorkloadStatus.decode(statusBytes)).toEqual(status);
  });

  it("encodes GetWorkloadStatusResponse to the hand-built bytes", () => {
    const encoded = agent.GetWorkloadStatusResponse.encode({ status }).finish();
    expect(hex(encoded)).toBe(hex(messageField(1, statusBytes)));
  });

  it("encodes ApplyWorkloadResponse to the hand-built bytes", () => {
    const encoded = agent.ApplyWorkloadResponse.encode({
      applied: true,
      skipped: false,
      message: "queued",
      status,
    }).finish();
    expect(hex(encoded)).toBe(
      hex(concat(varintField(1, true), stringField(3, "queued"), messageField(4, statusBytes))),
    );
  });
});

describe("agent enums are open", () => {
  it("keeps unknown ActualState and WorkloadType numbers through decode and encode", () => {
    const bytes = concat(stringField(1, "x"), varintField(2, 9), varintField(5, 42));
    const decoded = agent.WorkloadStatus.decode(bytes);
    expect(decoded.type).toBe(9);
    expect(decoded.actualState).toBe(42);
    expect(hex(agent.WorkloadStatus.encode(decoded).finish())).toBe(hex(bytes));
  });
});

describe("agent HealthCheckResponse", () => {
  it("decodes doubles (4, 5, 6) and the runtime_status map", () => {
    const bytes = concat(
      varintField(1, true),
      stringField(2, "0.3.0"),
      mapEntry(3, "docker", "healthy"),
      mapEntry(3, "vm", "unhealthy: libvirtd not running"),
      doubleField(4, 61.5),
      doubleField(5, 7.25),
      doubleField(6, 0.5),
    );
    expect(agent.HealthCheckResponse.decode(bytes)).toEqual({
      healthy: true,
      version: "0.3.0",
      runtimeStatus: { docker: "healthy", vm: "unhealthy: libvirtd not running" },
      memoryUtilization: 61.5,
      cpuUtilization: 7.25,
      diskUtilization: 0.5,
    } satisfies agent.HealthCheckResponse);
  });
});
