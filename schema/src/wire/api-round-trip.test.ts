// The public API's main messages survive binary and JSON round trips, and their JSON looks the way a
// REST client sees it: lowerCamelCase names, enum value names, the oneof member as the key.
import { describe, expect, it } from "vitest";
import { api } from "../index.js";

const decidedAt = new Date("2026-01-02T03:04:05.678Z");

const diagnosis: api.PlacementDiagnosis = {
  nodesEvaluated: 12,
  feasibleNodes: 0,
  scoredNodes: 0,
  filterCounts: [
    { plugin: "resources-fit", reason: "insufficient memory", count: 7 },
    { plugin: "capabilities", reason: "missing capability kvm", count: 5 },
  ],
  exhaustion: [
    {
      dimension: api.ResourceDimension.RESOURCE_DIMENSION_MEMORY,
      needed: 2048,
      bestAvailable: 1536,
      unit: "MiB",
      nodesShort: 7,
    },
  ],
  candidates: [{ nodeId: "n1", totalScore: 81.5, scores: [{ plugin: "least-allocated", score: 81.5, weight: 1 }] }],
  winnerNodeId: "",
  message:
    "0/12 nodes are available: 7 insufficient memory (need 2048 MiB, most free 1536 MiB), 5 missing capability kvm.",
  decidedAt,
  nodes: [
    {
      nodeId: "n1",
      feasible: false,
      failures: [
        { plugin: "resources-fit", reason: "INSUFFICIENT_MEMORY", detail: "need 2048 MiB, free 1536 MiB of 8192 MiB" },
        { plugin: "runtime-capability", reason: "CAPABILITY_MISSING", detail: "kvm" },
      ],
    },
  ],
};

const base = {
  replicas: 2,
  resources: { cpuMillicores: 500, memoryMib: 256, diskGib: 1 },
  desiredState: api.DesiredState.DESIRED_STATE_RUNNING,
  labels: { app: "web" },
  placement: api.Placement.fromPartial({
    nodeSelector: { zone: "eu-1" },
    requiredNodeAffinity: [{ key: "disk", operator: api.LabelOperator.LABEL_OPERATOR_IN, values: ["ssd"] }],
    replicaAntiAffinity: { enforcement: api.Enforcement.ENFORCEMENT_REQUIRED, topologyKey: "", weight: 0 },
    spread: [{ topologyKey: "zone", maxSkew: 1, enforcement: api.Enforcement.ENFORCEMENT_PREFERRED }],
    requiredCapabilities: ["kvm"],
  }),
};

const cases: { name: string; workload: api.Workload; jsonKey: string }[] = [
  {
    name: "container",
    jsonKey: "container",
    workload: api.Workload.fromPartial({
      ...base,
      id: "web",
      kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
      spec: {
        $case: "container",
        value: {
          image: "nginx:1.27",
          secretEnv: { DB_PASSWORD: { secret: "db", key: "password" } },
          ports: [{ containerPort: 80, hostPort: 8080, protocol: api.Protocol.PROTOCOL_TCP, hostIp: "" }],
          volumes: [
            { source: { $case: "volume", value: "html" }, containerPath: "/usr/share/nginx/html", readOnly: true },
          ],
          restartPolicy: { mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE, maxRetries: 3 },
        },
      },
      status: {
        revision: "9f2c",
        generation: 3,
        observedGeneration: 3,
        state: api.WorkloadState.WORKLOAD_STATE_PENDING,
        replicas: [
          {
            index: 0,
            name: "web-0",
            state: api.ReplicaState.REPLICA_STATE_PENDING,
            reason: {
              code: api.ErrorCode.UNSCHEDULABLE,
              message: diagnosis.message,
              retryable: true,
              nextRetryAt: decidedAt,
            },
            placement: diagnosis,
          },
        ],
      },
    }),
  },
  {
    name: "compose from git",
    jsonKey: "compose",
    workload: api.Workload.fromPartial({
      ...base,
      id: "shop",
      kind: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
      spec: {
        $case: "compose",
        value: {
          source: {
            $case: "git",
            value: { repo: "https://git.example/shop.git", ref: "v2", path: "deploy/compose.yaml" },
          },
          profiles: ["prod"],
        },
      },
    }),
  },
  {
    name: "vm",
    jsonKey: "vm",
    workload: api.Workload.fromPartial({
      ...base,
      id: "db-vm",
      kind: api.WorkloadKind.WORKLOAD_KIND_VM,
      spec: {
        $case: "vm",
        value: {
          vcpus: 2,
          memoryMib: 2048,
          baseImage: { $case: "imageName", value: "debian-12" },
          disks: [{ name: "root", sizeGib: 20, format: api.DiskFormat.DISK_FORMAT_QCOW2, boot: true }],
          cloudInit: { userData: "#cloud-config\n" },
          accelerator: api.Accelerator.ACCELERATOR_TCG,
        },
      },
    }),
  },
];

describe("api.Workload round trips", () => {
  it.each(cases)("$name: binary", ({ workload }) => {
    expect(api.Workload.decode(api.Workload.encode(workload).finish())).toEqual(workload);
  });

  it.each(cases)("$name: JSON", ({ workload, jsonKey }) => {
    const json = api.Workload.toJSON(workload) as Record<string, unknown>;
    expect(json).toHaveProperty(jsonKey);
    expect(json).not.toHaveProperty("spec");
    expect(api.Workload.fromJSON(JSON.parse(JSON.stringify(json)))).toEqual(workload);
  });

  it("writes enums by value name and timestamps as RFC 3339 in JSON", () => {
    const json = api.Workload.toJSON(cases[0]!.workload) as {
      kind: string;
      status: { replicas: { reason: { code: string }; placement: { decidedAt: string } }[] };
    };
    expect(json.kind).toBe("WORKLOAD_KIND_CONTAINER");
    expect(json.status.replicas[0]?.reason.code).toBe("UNSCHEDULABLE");
    expect(json.status.replicas[0]?.placement.decidedAt).toBe("2026-01-02T03:04:05.678Z");
  });
});

describe("api.PlacementDiagnosis", () => {
  it("round trips through binary with every field", () => {
    expect(api.PlacementDiagnosis.decode(api.PlacementDiagnosis.encode(diagnosis).finish())).toEqual(diagnosis);
  });
});
