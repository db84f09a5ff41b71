/**
 * Builds agent `ApplyWorkloadRequest`s the way a Persys control plane sends them (Go fields plus the
 * `persys` ReplicaAssignment), for tests that drive simulated nodes directly.
 */
import { agent, api } from "@persys/schema";

/** What to assign; everything but `workloadId` has a default. */
export interface AssignmentInput {
  readonly workloadId: string;
  /** Default 0. */
  readonly index?: number;
  /** Default 1. */
  readonly generation?: number;
  /** Default `rev-1`. */
  readonly revision?: string;
  /** Default `running`. */
  readonly desired?: "running" | "stopped";
  /** Default `container`. */
  readonly kind?: "container" | "compose" | "vm";
  /** Default `busybox:1`. */
  readonly image?: string;
  /** Default 100 m, 64 MiB, 0 GiB. */
  readonly resources?: { cpuMillicores: number; memoryMiB: number; diskGiB?: number };
  readonly ports?: readonly { hostPort: number; containerPort: number; protocol?: "tcp" | "udp" }[];
  readonly restartPolicy?: api.RestartPolicyMode;
  readonly maxRetries?: number;
  /** Default `<workloadId>-<index>`. */
  readonly agentId?: string;
  /** Target node id carried in the assignment. Default empty. */
  readonly nodeId?: string;
}

const kinds = {
  container: [api.WorkloadKind.WORKLOAD_KIND_CONTAINER, agent.WorkloadType.WORKLOAD_TYPE_CONTAINER],
  compose: [api.WorkloadKind.WORKLOAD_KIND_COMPOSE, agent.WorkloadType.WORKLOAD_TYPE_COMPOSE],
  vm: [api.WorkloadKind.WORKLOAD_KIND_VM, agent.WorkloadType.WORKLOAD_TYPE_VM],
} as const;

function workloadSpec(input: AssignmentInput): api.Workload["spec"] {
  switch (input.kind ?? "container") {
    case "compose":
      return {
        $case: "compose",
        value: api.ComposeSpec.fromPartial({ source: { $case: "inlineYaml", value: "services: {}\n" } }),
      };
    case "vm":
      return { $case: "vm", value: api.VmSpec.fromPartial({ vcpus: 1, memoryMib: input.resources?.memoryMiB ?? 64 }) };
    default:
      return {
        $case: "container",
        value: api.ContainerSpec.fromPartial({
          image: input.image ?? "busybox:1",
          ports: (input.ports ?? []).map((p) => ({
            hostPort: p.hostPort,
            containerPort: p.containerPort,
            protocol: p.protocol === "udp" ? api.Protocol.PROTOCOL_UDP : api.Protocol.PROTOCOL_TCP,
          })),
          restartPolicy:
            input.restartPolicy === undefined
              ? undefined
              : { mode: input.restartPolicy, maxRetries: input.maxRetries ?? 0 },
        }),
      };
  }
}

/** An agent ApplyWorkloadRequest carrying the Persys ReplicaAssignment. */
export function assignmentRequest(input: AssignmentInput): agent.ApplyWorkloadRequest {
  const index = input.index ?? 0;
  const [apiKind, agentType] = kinds[input.kind ?? "container"];
  const stopped = input.desired === "stopped";
  const r = input.resources ?? { cpuMillicores: 100, memoryMiB: 64 };
  const revision = input.revision ?? "rev-1";
  const workload = api.Workload.fromPartial({
    id: input.workloadId,
    kind: apiKind,
    replicas: index + 1,
    resources: { cpuMillicores: r.cpuMillicores, memoryMib: r.memoryMiB, diskGib: r.diskGiB ?? 0 },
    desiredState: stopped ? api.DesiredState.DESIRED_STATE_STOPPED : api.DesiredState.DESIRED_STATE_RUNNING,
    spec: workloadSpec(input),
  });
  const spec = workload.spec;
  return agent.ApplyWorkloadRequest.fromPartial({
    id: input.agentId ?? `${input.workloadId}-${index}`,
    type: agentType,
    revisionId: revision,
    desiredState: stopped ? agent.DesiredState.DESIRED_STATE_STOPPED : agent.DesiredState.DESIRED_STATE_RUNNING,
    spec:
      spec?.$case === "container"
        ? { spec: { $case: "container", value: agent.ContainerSpec.fromPartial({ image: spec.value.image }) } }
        : undefined,
    persys: { workload, replicaIndex: index, generation: input.generation ?? 1, nodeId: input.nodeId ?? "", revision },
  });
}
