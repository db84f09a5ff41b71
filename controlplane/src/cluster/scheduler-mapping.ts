import { api } from "@persys/schema";
import type {
  LabelExpression,
  PlacementDiagnosis,
  PlacementRequest,
  PlacementRules,
  SchedulerNode,
  WorkloadKind,
} from "../scheduler/index.js";
import { renderFilterDetail } from "../scheduler/index.js";
import { composeHostPorts, stackDiagnosisPrefix } from "./compose-workload.js";
import { descriptionOf, type NodeRecord } from "./records.js";

const kinds: Record<number, WorkloadKind> = {
  [api.WorkloadKind.WORKLOAD_KIND_CONTAINER]: "container",
  [api.WorkloadKind.WORKLOAD_KIND_COMPOSE]: "compose",
  [api.WorkloadKind.WORKLOAD_KIND_VM]: "vm",
};

export function kindName(kind: api.WorkloadKind): WorkloadKind {
  return kinds[kind] ?? "container";
}

const operators: Record<number, LabelExpression["operator"]> = {
  [api.LabelOperator.LABEL_OPERATOR_IN]: "In",
  [api.LabelOperator.LABEL_OPERATOR_NOT_IN]: "NotIn",
  [api.LabelOperator.LABEL_OPERATOR_EXISTS]: "Exists",
  [api.LabelOperator.LABEL_OPERATOR_DOES_NOT_EXIST]: "DoesNotExist",
};

function expression(e: api.LabelExpression): LabelExpression {
  const operator = operators[e.operator] ?? "In";
  return operator === "In" || operator === "NotIn"
    ? { key: e.key, operator, values: e.values }
    : { key: e.key, operator };
}

function rules(workload: api.Workload): PlacementRules {
  const p = workload.placement;
  const capabilities = new Set(p?.requiredCapabilities ?? []);
  if (workload.spec?.$case === "vm" && workload.spec.value.accelerator === api.Accelerator.ACCELERATOR_KVM) {
    capabilities.add("kvm");
  }
  const replicaRule = p?.replicaAntiAffinity?.enforcement;
  return {
    nodeSelector: p?.nodeSelector ?? {},
    requiredAffinity: (p?.requiredNodeAffinity ?? []).map(expression),
    preferredAffinity: (p?.preferredNodeAffinity ?? [])
      .filter((t) => t.expression)
      .map((t) => ({ weight: t.weight, match: [expression(t.expression!)] })),
    antiAffinity: {
      replicas:
        replicaRule === api.Enforcement.ENFORCEMENT_REQUIRED
          ? "required"
          : replicaRule === api.Enforcement.ENFORCEMENT_PREFERRED || replicaRule === undefined
            ? "preferred"
            : "preferred",
      workloads: (p?.workloadAntiAffinity ?? [])
        .filter((r) => r.enforcement !== api.Enforcement.ENFORCEMENT_PREFERRED && r.workloadSelector)
        .map((r) => ({
          matchLabels: r.workloadSelector!.matchLabels,
          matchExpressions: r.workloadSelector!.matchExpressions.map(expression),
        })),
    },
    spread: (p?.spread ?? []).map((s) => ({
      labelKey: s.topologyKey,
      maxSkew: Math.max(1, s.maxSkew),
      whenUnsatisfiable:
        s.enforcement === api.Enforcement.ENFORCEMENT_PREFERRED ? "schedule-anyway" : "do-not-schedule",
    })),
    requiredCapabilities: [...capabilities],
    arch: p?.arch ? [p.arch] : [],
  };
}

/**
 * What one replica reserves. A VM reserves at least its vCPUs and memory even when `resources`
 * asks for less, so a VM can never be over-committed on a node.
 */
export function replicaResources(workload: api.Workload): {
  cpuMillicores: number;
  memoryMiB: number;
  diskGiB: number;
} {
  const r = workload.resources ?? { cpuMillicores: 0, memoryMib: 0, diskGib: 0 };
  let cpu = r.cpuMillicores;
  let memory = r.memoryMib;
  let disk = r.diskGib;
  if (workload.spec?.$case === "vm") {
    const vm = workload.spec.value;
    cpu = Math.max(cpu, vm.vcpus * 1000);
    memory = Math.max(memory, vm.memoryMib);
    disk = Math.max(
      disk,
      vm.disks.reduce((sum, d) => sum + d.sizeGib, 0),
    );
  }
  return { cpuMillicores: cpu, memoryMiB: memory, diskGiB: disk };
}

/** The scheduler's view of a workload (defaults already applied). */
export function placementRequest(workload: api.Workload): PlacementRequest {
  const hostPorts =
    workload.spec?.$case === "container"
      ? workload.spec.value.ports
          .filter((p) => p.hostPort > 0)
          .map((p) => ({
            port: p.hostPort,
            protocol: p.protocol === api.Protocol.PROTOCOL_UDP ? ("udp" as const) : ("tcp" as const),
          }))
      : composeHostPorts(workload);
  return {
    workloadId: workload.id,
    kind: kindName(workload.kind),
    replicas: workload.replicas ?? 1,
    resources: replicaResources(workload),
    labels: workload.labels,
    hostPorts,
    placement: rules(workload),
  };
}

const resourcesOf = (r: api.Resources | undefined) => ({
  cpuMillicores: Math.max(0, r?.cpuMillicores ?? 0),
  memoryMiB: Math.max(0, r?.memoryMib ?? 0),
  diskGiB: Math.max(0, r?.diskGib ?? 0),
});

/** The scheduler's view of a node record; `live` is whether its liveness lease is held. */
export function schedulerNode(record: NodeRecord, live: boolean, usage?: api.Resources): SchedulerNode {
  const description = descriptionOf(record);
  const runtimes = description.supportedKinds.map(kindName);
  return {
    id: record.id,
    labels: record.labels,
    capabilities: description.capabilities,
    runtimes: runtimes.length > 0 ? [...new Set(runtimes)] : ["container"],
    arch: description.arch || "amd64",
    capacity: resourcesOf(description.capacity),
    allocatable: resourcesOf(description.allocatable ?? description.capacity),
    usage: usage ? resourcesOf(usage) : undefined,
    cordoned: record.cordoned ?? false,
    draining: record.draining ?? false,
    ready: live && !record.lostAt,
  };
}

const dimensionOf: Record<string, api.ResourceDimension> = {
  cpu: api.ResourceDimension.RESOURCE_DIMENSION_CPU,
  memory: api.ResourceDimension.RESOURCE_DIMENSION_MEMORY,
  disk: api.ResourceDimension.RESOURCE_DIMENSION_DISK,
};

/**
 * The API form of an engine diagnosis. With the workload, a compose stack's message says that the
 * stack is placed whole on one node and what it needs (see `stackDiagnosisPrefix`).
 */
export function apiDiagnosis(d: PlacementDiagnosis, workload?: api.Workload): api.PlacementDiagnosis {
  return {
    nodesEvaluated: d.nodesEvaluated,
    feasibleNodes: d.feasibleNodes,
    scoredNodes: d.scoredNodes,
    filterCounts: d.filterCounts.map((c) => ({
      plugin: c.plugin,
      reason: c.subject ? `${c.reason}(${c.subject})` : c.reason,
      count: c.count,
    })),
    exhaustion: d.exhaustion.map((e) => ({
      dimension: dimensionOf[e.dimension] ?? api.ResourceDimension.RESOURCE_DIMENSION_UNSPECIFIED,
      needed: e.needed,
      bestAvailable: e.bestAvailable,
      unit: e.unit,
      nodesShort: e.nodesShort,
    })),
    candidates: d.candidates.map((c) => ({
      nodeId: c.nodeId,
      totalScore: c.total,
      scores: c.scores.map((s) => ({ plugin: s.plugin, score: s.score, weight: s.weight })),
    })),
    winnerNodeId: d.winner ?? "",
    message: (workload ? stackDiagnosisPrefix(workload) : "") + d.message,
    decidedAt: new Date(d.decidedAt),
    nodes: d.nodes.map((v) => ({
      nodeId: v.nodeId,
      feasible: v.feasible,
      failures: v.failures.map((f) => ({ plugin: f.plugin, reason: f.reason, detail: renderFilterDetail(f.detail) })),
    })),
  };
}
