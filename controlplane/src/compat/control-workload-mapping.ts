import { api, type control, invalid, labelKeyProblem, labelValueProblem } from "@persys/schema";

const restart: Record<string, api.RestartPolicyMode> = {
  no: api.RestartPolicyMode.RESTART_POLICY_MODE_NO,
  always: api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS,
  "on-failure": api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE,
  "unless-stopped": api.RestartPolicyMode.RESTART_POLICY_MODE_UNLESS_STOPPED,
};

/** The Go scheduler's desired-state rule: `stop`/`stopped` (any case) is Stopped, anything else Running. */
export function desiredFromGo(value: string): api.DesiredState {
  return /^stop(ped)?$/i.test(value.trim())
    ? api.DesiredState.DESIRED_STATE_STOPPED
    : api.DesiredState.DESIRED_STATE_RUNNING;
}

export function desiredToGo(value: api.DesiredState): string {
  return value === api.DesiredState.DESIRED_STATE_STOPPED ? "Stopped" : "Running";
}

const kindOf: Record<string, api.WorkloadKind> = {
  container: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  "docker-container": api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  "docker-compose": api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  "git-compose": api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: api.WorkloadKind.WORKLOAD_KIND_VM,
};

export function kindToGo(kind: api.WorkloadKind): string {
  return kind === api.WorkloadKind.WORKLOAD_KIND_COMPOSE
    ? "compose"
    : kind === api.WorkloadKind.WORKLOAD_KIND_VM
      ? "vm"
      : "container";
}

/**
 * The public API workload for a Go-style `ApplyWorkloadRequest` (from the Go persysctl or gateway).
 * The spec's string `metadata` becomes labels where the keys are valid label keys. Bad input is
 * INVALID_SPEC naming the Go field.
 */
export function workloadFromControl(request: control.ApplyWorkloadRequest): api.Workload {
  const spec = request.spec!;
  const kind = kindOf[spec.type.trim().toLowerCase()] ?? kindOf[spec.workload?.$case ?? ""];
  if (kind === undefined)
    throw invalid("INVALID_SPEC", [{ path: "spec.type", reason: "must be container, compose or vm" }]);
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec.metadata)) {
    if (!labelKeyProblem(key) && !labelValueProblem(value)) labels[key] = value;
  }
  const workload = api.Workload.fromPartial({
    id: request.workloadId,
    kind,
    desiredState: desiredFromGo(request.desiredState),
    labels,
    resources: {
      cpuMillicores: spec.resources?.cpuMillicores ?? 0,
      memoryMib: spec.resources?.memoryMb ?? 0,
      diskGib: spec.resources?.diskGb ?? 0,
    },
  });
  const body = spec.workload;
  if (body?.$case === "container") {
    const c = body.value;
    workload.spec = {
      $case: "container",
      value: api.ContainerSpec.fromPartial({
        image: c.image,
        command: c.command,
        env: c.env,
        volumes: c.volumes.map((v) => ({
          source: { $case: "hostPath", value: v.hostPath },
          containerPath: v.containerPath,
          readOnly: v.readOnly,
        })),
        ports: c.ports.map((p) => ({
          containerPort: p.containerPort,
          hostPort: p.hostPort,
          protocol: p.protocol.toLowerCase() === "udp" ? api.Protocol.PROTOCOL_UDP : api.Protocol.PROTOCOL_TCP,
        })),
        restartPolicy: {
          mode: restart[c.restartPolicy.toLowerCase()] ?? api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS,
          maxRetries: 0,
        },
        privileged: c.privileged,
      }),
    };
  } else if (body?.$case === "compose") {
    const c = body.value;
    const git = c.sourceType.toLowerCase() === "git" || (!c.inlineYaml && c.gitRepo);
    workload.spec = {
      $case: "compose",
      value: api.ComposeSpec.fromPartial({
        source: git
          ? { $case: "git", value: { repo: c.gitRepo, ref: c.gitRef, path: "", credentialsSecret: "" } }
          : { $case: "inlineYaml", value: c.inlineYaml },
        env: c.env,
      }),
    };
  } else if (body?.$case === "vm") {
    const v = body.value;
    workload.spec = {
      $case: "vm",
      value: api.VmSpec.fromPartial({
        vcpus: v.vcpus,
        memoryMib: v.memoryMb,
        ...(v.osImage ? { baseImage: { $case: "imageName", value: v.osImage } } : {}),
        disks: v.disks.map((d) => ({ name: "", sizeGib: d.sizeGb, pool: d.poolName })),
        networks: v.networks.map((n) => ({ network: n.bridge, mac: "" })),
        ...(v.cloudInit
          ? {
              cloudInit: {
                userData: v.cloudInit.userData,
                metaData: v.cloudInit.metaData,
                networkConfig: v.cloudInit.networkConfig,
              },
            }
          : {}),
      }),
    };
  }
  return workload;
}
