import { agent, api } from "@persys/schema";
import { replicaName } from "../cluster/keys.js";

const restartModes: Record<number, string> = {
  [api.RestartPolicyMode.RESTART_POLICY_MODE_NO]: "no",
  [api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS]: "always",
  [api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE]: "on-failure",
  [api.RestartPolicyMode.RESTART_POLICY_MODE_UNLESS_STOPPED]: "unless-stopped",
};

const types: Record<number, agent.WorkloadType> = {
  [api.WorkloadKind.WORKLOAD_KIND_CONTAINER]: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
  [api.WorkloadKind.WORKLOAD_KIND_COMPOSE]: agent.WorkloadType.WORKLOAD_TYPE_COMPOSE,
  [api.WorkloadKind.WORKLOAD_KIND_VM]: agent.WorkloadType.WORKLOAD_TYPE_VM,
};

/** Labels every runtime object of a replica carries, so agents can adopt and garbage-collect them. */
export function replicaLabels(workloadId: string, index: number, revision: string, nodeId: string) {
  return {
    "persys.workload": workloadId,
    "persys.replica": String(index),
    "persys.revision": revision,
    "persys.node": nodeId,
  };
}

function goSpec(workload: api.Workload, name: string, labels: Record<string, string>): agent.WorkloadSpec {
  const spec = workload.spec;
  if (spec?.$case === "container") {
    const c = spec.value;
    const cpu = workload.resources?.cpuMillicores ?? 0;
    const memory = workload.resources?.memoryMib ?? 0;
    return {
      spec: {
        $case: "container",
        value: agent.ContainerSpec.fromPartial({
          image: c.image,
          command: c.command,
          args: c.args,
          env: c.env,
          volumes: c.volumes
            .filter((v) => v.source?.$case === "hostPath")
            .map((v) => ({ hostPath: v.source!.value, containerPath: v.containerPath, readOnly: v.readOnly })),
          ports: c.ports.map((p) => ({
            hostPort: p.hostPort,
            containerPort: p.containerPort,
            protocol: p.protocol === api.Protocol.PROTOCOL_UDP ? "udp" : "tcp",
          })),
          resources: {
            cpuShares: cpu > 0 ? Math.max(2, Math.round((cpu * 1024) / 1000)) : 0,
            memoryBytes: memory * 1024 * 1024,
            memorySwapBytes: 0,
          },
          restartPolicy: {
            policy: restartModes[c.restartPolicy?.mode ?? 0] ?? "always",
            maxRetryCount: c.restartPolicy?.maxRetries ?? 0,
          },
          labels,
        }),
      },
    };
  }
  if (spec?.$case === "compose") {
    const c = spec.value;
    return {
      spec: {
        $case: "compose",
        value: {
          projectName: c.projectName || name,
          composeYaml: c.source?.$case === "inlineYaml" ? c.source.value : "",
          env: c.env,
        },
      },
    };
  }
  if (spec?.$case === "vm") {
    const v = spec.value;
    return {
      spec: {
        $case: "vm",
        value: agent.VMSpec.fromPartial({
          name,
          vcpus: v.vcpus,
          memoryMb: v.memoryMib,
          disks: v.disks.map((d, i) => ({
            device: `vd${String.fromCharCode(98 + i)}`,
            format: d.format === api.DiskFormat.DISK_FORMAT_RAW ? "raw" : "qcow2",
            sizeGb: d.sizeGib,
            type: "disk",
            boot: d.boot,
          })),
          networks: v.networks.map((n) => ({ network: n.network, macAddress: n.mac, ipAddress: "" })),
          cloudInit: v.cloudInit?.userData ?? "",
          metadata: labels,
          cloudInitConfig: v.cloudInit
            ? {
                userData: v.cloudInit.userData,
                metaData: v.cloudInit.metaData,
                networkConfig: v.cloudInit.networkConfig,
                vendorData: "",
              }
            : undefined,
        }),
      },
    };
  }
  return { spec: undefined };
}

/**
 * The `persys.agent.v1.ApplyWorkloadRequest` for one replica: the Go fields (so a Go compute-agent
 * can run it) and the Persys extension with the full spec, the replica's identity and its fencing
 * generation. `agentRevision` is the revision id the agent keys idempotency on.
 */
export function agentApplyRequest(input: {
  workload: api.Workload;
  index: number;
  nodeId: string;
  generation: number;
  revision: string;
  agentRevision: string;
  /** In-place reboots asked for so far (`agentRevision` ends with `+b<n>` when above 0). */
  rebootGeneration?: number;
  desiredState: api.DesiredState;
}): agent.ApplyWorkloadRequest {
  const name = replicaName(input.workload.id, input.index);
  const labels = replicaLabels(input.workload.id, input.index, input.agentRevision, input.nodeId);
  return {
    id: name,
    type: types[input.workload.kind] ?? agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
    revisionId: input.agentRevision,
    desiredState:
      input.desiredState === api.DesiredState.DESIRED_STATE_STOPPED
        ? agent.DesiredState.DESIRED_STATE_STOPPED
        : agent.DesiredState.DESIRED_STATE_RUNNING,
    spec: goSpec(input.workload, name, labels),
    persys: {
      workload: { ...input.workload, status: undefined },
      replicaIndex: input.index,
      generation: input.generation,
      nodeId: input.nodeId,
      revision: input.agentRevision,
      rebootGeneration: input.rebootGeneration ?? 0,
    },
  };
}
