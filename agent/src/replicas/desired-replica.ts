import { createHash } from "node:crypto";
import {
  agent,
  api,
  type FieldViolation,
  invalid,
  PersysError,
  secretUsesOf,
  withDefaults,
  workloadViolations,
} from "@persys/schema";
import {
  type ComposeRuntimeSpec,
  composeFromGo,
  composeRuntimeSpec,
} from "../runtimes/compose/compose-runtime-spec.js";
import type { VmRuntimeSpec } from "../runtimes/vm/vm-runtime-spec.js";
import { vmRuntimeSpec } from "../runtimes/vm/vm-runtime-spec.js";
import type { SecretEnvRef, SecretFileRef } from "./replica-secrets.js";

/** What the node should do with a replica. `deleted` is kept until the runtime objects are gone. */
export type DesiredState = "running" | "stopped" | "deleted";

/** Docker restart policy names. */
export type RestartMode = "no" | "always" | "on-failure" | "unless-stopped";

export interface ContainerPort {
  readonly containerPort: number;
  /** 0: not published. */
  readonly hostPort: number;
  readonly protocol: "tcp" | "udp";
  /** Empty: every address. */
  readonly hostIp: string;
}

export interface ContainerMount {
  /** `bind`: a host path; `volume`: a Docker named volume (kept on delete); `managed`: a Go managed volume. */
  readonly kind: "bind" | "volume" | "managed";
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
  /** `managed` only: remove the volume with the replica (Go retain_policy other than Retain). */
  readonly removeOnDelete?: boolean;
}

export interface ContainerHealthcheck {
  readonly command: readonly string[];
  /** 0: Docker's default. */
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  readonly retries: number;
  readonly startPeriodSeconds: number;
}

/** A container as the Docker runtime creates it, whichever wire form it came from. */
export interface ContainerRuntimeSpec {
  readonly image: string;
  /** Replaces the image entrypoint when set. */
  readonly entrypoint?: readonly string[];
  /** Replaces the image command when set. */
  readonly cmd?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly ports: readonly ContainerPort[];
  readonly mounts: readonly ContainerMount[];
  readonly restart: { readonly mode: RestartMode; readonly maxRetries: number };
  readonly healthcheck?: ContainerHealthcheck;
  readonly user: string;
  readonly workingDir: string;
  readonly privileged: boolean;
  readonly hostNetwork: boolean;
  /** Host devices, Docker's `--device` form. */
  readonly devices?: readonly string[];
  /** Grace between SIGTERM and SIGKILL. */
  readonly stopTimeoutSeconds: number;
  /** Environment variables from secrets: references only (values stay in agent memory). */
  readonly secretEnv?: readonly SecretEnvRef[];
  /** Files from secrets, bind-mounted read-only: references only. */
  readonly secretFiles?: readonly SecretFileRef[];
  /** Extra container labels (the workload's labels, or the Go spec's); `persys.*` keys are reserved. */
  readonly labels: Readonly<Record<string, string>>;
  /** Hard limits (0: none) and the Go agent's relative CPU weight. */
  readonly limits: {
    readonly nanoCpus: number;
    readonly memoryBytes: number;
    readonly memorySwapBytes: number;
    readonly cpuShares: number;
  };
}

/** What every desired replica has, whatever its kind. */
export interface DesiredReplicaBase {
  /** The request id: the runtime object's name (`web-0`), the key of every AgentService call. */
  readonly id: string;
  readonly workloadId: string;
  readonly index: number;
  /** Fencing token of the assignment (0 from Go schedulers). */
  readonly generation: number;
  /** Revision the runtime object must be created from. */
  readonly revision: string;
  readonly desired: DesiredState;
  /** Reserved on the node (heartbeat `allocated`). */
  readonly resources: { readonly cpuMillicores: number; readonly memoryMib: number; readonly diskGib: number };
  /** Which wire form the request used. */
  readonly source: "persys" | "go";
}

export interface ContainerReplica extends DesiredReplicaBase {
  readonly kind: "container";
  readonly spec: ContainerRuntimeSpec;
}

/** A Compose stack: one Compose project on the node (see runtimes/compose). */
export interface ComposeReplica extends DesiredReplicaBase {
  readonly kind: "compose";
  readonly spec: ComposeRuntimeSpec;
}

export interface VmReplica extends DesiredReplicaBase {
  readonly kind: "vm";
  readonly spec: VmRuntimeSpec;
}

/**
 * One replica the control plane (or a Go scheduler) asked this node to run; `kind` picks the
 * {@link ReplicaDriver} that runs it.
 */
export type DesiredReplica = ContainerReplica | VmReplica | ComposeReplica;

const restartModes: Record<number, RestartMode> = {
  [api.RestartPolicyMode.RESTART_POLICY_MODE_NO]: "no",
  [api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS]: "always",
  [api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE]: "on-failure",
  [api.RestartPolicyMode.RESTART_POLICY_MODE_UNLESS_STOPPED]: "unless-stopped",
};

const DEFAULT_STOP_TIMEOUT_SECONDS = 10;

function fromPersys(request: agent.ApplyWorkloadRequest, assignment: api.ReplicaAssignment): DesiredReplica {
  const workload = withDefaults(assignment.workload ?? api.Workload.fromPartial({}));
  const violations = workloadViolations(workload).map((v) => ({ ...v, path: `persys.workload.${v.path}` }));
  if (!request.id) violations.push({ path: "id", reason: "is required" });
  if (violations.length > 0) throw invalid("INVALID_SPEC", violations, `replica ${request.id || "(no id)"}`);
  const resources = workload.resources ?? { cpuMillicores: 0, memoryMib: 0, diskGib: 0 };
  const base: DesiredReplicaBase = {
    id: request.id,
    workloadId: workload.id,
    index: assignment.replicaIndex,
    generation: assignment.generation,
    revision: assignment.revision || request.revisionId || revisionOf(request),
    desired: desiredOf(workload.desiredState === api.DesiredState.DESIRED_STATE_STOPPED, request.desiredState),
    resources: { cpuMillicores: resources.cpuMillicores, memoryMib: resources.memoryMib, diskGib: resources.diskGib },
    source: "persys",
  };
  const spec = workload.spec;
  switch (spec?.$case) {
    case "container":
      return containerFromPersys(request, workload, spec.value, base);
    case "vm":
      return { ...base, kind: "vm", spec: vmRuntimeSpec(spec.value) };
    case "compose":
      return { ...base, kind: "compose", spec: composeRuntimeSpec(spec.value, workload, assignment.replicaIndex) };
    default:
      throw new PersysError(
        "RUNTIME_UNAVAILABLE",
        `this node cannot run replica ${request.id}: it is a spec-less workload`,
        { retryable: false },
      );
  }
}

function containerFromPersys(
  _request: agent.ApplyWorkloadRequest,
  workload: api.Workload,
  c: api.ContainerSpec,
  base: DesiredReplicaBase,
): ContainerReplica {
  const uses = secretUsesOf(c);
  const resources = base.resources;
  const reserved = new Set(Object.keys(workload.labels).filter((k) => k.startsWith("persys.")));
  return {
    ...base,
    kind: "container",
    spec: {
      image: c.image,
      ...(c.command.length > 0 ? { entrypoint: c.command } : {}),
      ...(c.args.length > 0 ? { cmd: c.args } : {}),
      env: c.env,
      ports: c.ports.map((p) => ({
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        protocol: p.protocol === api.Protocol.PROTOCOL_UDP ? "udp" : "tcp",
        hostIp: p.hostIp,
      })),
      mounts: c.volumes.map((v) => ({
        kind: v.source?.$case === "volume" ? "volume" : "bind",
        source: v.source?.value ?? "",
        target: v.containerPath,
        readOnly: v.readOnly,
      })),
      restart: {
        mode: restartModes[c.restartPolicy?.mode ?? 0] ?? "on-failure",
        maxRetries: c.restartPolicy?.maxRetries ?? 0,
      },
      ...(c.healthcheck && c.healthcheck.command.length > 0
        ? {
            healthcheck: {
              command: c.healthcheck.command,
              intervalSeconds: c.healthcheck.intervalSeconds,
              timeoutSeconds: c.healthcheck.timeoutSeconds,
              retries: c.healthcheck.retries,
              startPeriodSeconds: c.healthcheck.startPeriodSeconds,
            },
          }
        : {}),
      ...(uses.length > 0
        ? {
            secretEnv: uses.flatMap((u) => ("env" in u.as ? [{ name: u.as.env, secret: u.secret, key: u.key }] : [])),
            secretFiles: uses.flatMap((u) =>
              "path" in u.as ? [{ secret: u.secret, key: u.key, path: u.as.path, mode: u.as.mode }] : [],
            ),
          }
        : {}),
      user: c.user,
      workingDir: c.workingDir,
      privileged: c.privileged,
      hostNetwork: c.hostNetwork,
      ...(c.devices.length > 0 ? { devices: c.devices } : {}),
      stopTimeoutSeconds: c.stopTimeoutSeconds || DEFAULT_STOP_TIMEOUT_SECONDS,
      labels: Object.fromEntries(Object.entries(workload.labels).filter(([k]) => !reserved.has(k))),
      limits: {
        nanoCpus: resources.cpuMillicores * 1_000_000,
        memoryBytes: resources.memoryMib * 1_048_576,
        memorySwapBytes: 0,
        cpuShares: 0,
      },
    },
  };
}

const goRestart = new Set<RestartMode>(["no", "always", "on-failure", "unless-stopped"]);

function fromGo(request: agent.ApplyWorkloadRequest): ContainerReplica {
  const v: FieldViolation[] = [];
  if (!request.id) v.push({ path: "id", reason: "is required" });
  const type = request.type;
  if (type !== agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED && type !== agent.WorkloadType.WORKLOAD_TYPE_CONTAINER) {
    throw new PersysError("RUNTIME_UNAVAILABLE", `this node runs containers only; ${request.id} is not a container`, {
      retryable: false,
    });
  }
  const c = request.spec?.spec?.$case === "container" ? request.spec.spec.value : undefined;
  if (!c) {
    v.push({ path: "spec.container", reason: "is required" });
    throw invalid("INVALID_SPEC", v, `workload ${request.id || "(no id)"}`);
  }
  if (!c.image.trim()) v.push({ path: "spec.container.image", reason: "is required" });
  c.ports.forEach((p, i) => {
    if (p.containerPort < 1 || p.containerPort > 65_535)
      v.push({ path: `spec.container.ports[${i}].container_port`, reason: "must be 1..65535" });
    if (p.hostPort < 0 || p.hostPort > 65_535)
      v.push({ path: `spec.container.ports[${i}].host_port`, reason: "must be 0..65535" });
    if (p.protocol && !/^(tcp|udp)$/i.test(p.protocol))
      v.push({ path: `spec.container.ports[${i}].protocol`, reason: "must be tcp or udp" });
  });
  c.volumes.forEach((m, i) => {
    if (!m.hostPath.startsWith("/"))
      v.push({ path: `spec.container.volumes[${i}].host_path`, reason: "must be absolute" });
    if (!m.containerPath.startsWith("/"))
      v.push({ path: `spec.container.volumes[${i}].container_path`, reason: "must be absolute" });
  });
  c.managedVolumes.forEach((m, i) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(m.name))
      v.push({ path: `spec.container.managed_volumes[${i}].name`, reason: "must be a volume name" });
    if (!m.mountPath.startsWith("/"))
      v.push({ path: `spec.container.managed_volumes[${i}].mount_path`, reason: "must be absolute" });
  });
  const policy = (c.restartPolicy?.policy || "no").toLowerCase() as RestartMode;
  if (!goRestart.has(policy))
    v.push({
      path: "spec.container.restart_policy.policy",
      reason: "must be no, always, on-failure or unless-stopped",
    });
  if (v.length > 0) throw invalid("INVALID_SPEC", v, `workload ${request.id || "(no id)"}`);
  const cmd = [...c.command, ...c.args];
  return {
    id: request.id,
    workloadId: request.id,
    index: 0,
    generation: 0,
    revision: request.revisionId || revisionOf(request),
    desired: desiredOf(false, request.desiredState),
    kind: "container",
    spec: {
      image: c.image,
      ...(cmd.length > 0 ? { cmd } : {}),
      env: c.env,
      ports: c.ports.map((p) => ({
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        protocol: p.protocol.toLowerCase() === "udp" ? "udp" : "tcp",
        hostIp: "",
      })),
      mounts: [
        ...c.volumes.map((m) => ({
          kind: "bind" as const,
          source: m.hostPath,
          target: m.containerPath,
          readOnly: m.readOnly,
        })),
        ...c.managedVolumes.map((m) => ({
          kind: "managed" as const,
          source: m.name,
          target: m.mountPath,
          readOnly: m.readOnly,
          removeOnDelete: m.retainPolicy.toLowerCase() !== "retain",
        })),
      ],
      restart: { mode: policy, maxRetries: c.restartPolicy?.maxRetryCount ?? 0 },
      user: "",
      workingDir: "",
      privileged: false,
      hostNetwork: false,
      stopTimeoutSeconds: DEFAULT_STOP_TIMEOUT_SECONDS,
      labels: Object.fromEntries(Object.entries(c.labels).filter(([k]) => !k.startsWith("persys."))),
      limits: {
        nanoCpus: 0,
        memoryBytes: c.resources?.memoryBytes ?? 0,
        memorySwapBytes: c.resources?.memorySwapBytes ?? 0,
        cpuShares: c.resources?.cpuShares ?? 0,
      },
    },
    resources: { cpuMillicores: 0, memoryMib: Math.ceil((c.resources?.memoryBytes ?? 0) / 1_048_576), diskGib: 0 },
    source: "go",
  };
}

function desiredOf(stoppedInSpec: boolean, wire: agent.DesiredState): DesiredState {
  if (wire === agent.DesiredState.DESIRED_STATE_STOPPED) return "stopped";
  if (wire === agent.DesiredState.DESIRED_STATE_RUNNING) return "running";
  return stoppedInSpec ? "stopped" : "running";
}

/** A revision for a request that carries none: the first 24 hex digits of the spec's SHA-256. */
function revisionOf(request: agent.ApplyWorkloadRequest): string {
  const spec = request.spec ? agent.WorkloadSpec.toJSON(request.spec) : {};
  return createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 24);
}

/**
 * The desired replica an `agent.v1.ApplyWorkloadRequest` asks for: from the Persys extension (the
 * full api.v1 Workload, validated with the same rules as the API) when present, else from the Go
 * fields (the Go compute-agent's ContainerSpec: command and args become the container command,
 * bind volumes, Docker CPU shares, no hard CPU limit; its ComposeSpec: one project from the file).
 * Pure.
 *
 * Throws INVALID_SPEC naming every bad field, or RUNTIME_UNAVAILABLE (not retryable) for a kind this
 * node has no runtime for. Nothing invalid reaches Docker.
 */
export function desiredReplicaFromRequest(request: agent.ApplyWorkloadRequest): DesiredReplica {
  if (request.persys?.workload) return fromPersys(request, request.persys);
  const goCompose =
    request.type === agent.WorkloadType.WORKLOAD_TYPE_COMPOSE ||
    (request.type === agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED && request.spec?.spec?.$case === "compose");
  return goCompose ? composeReplicaFromGo(request) : fromGo(request);
}

/** A Go scheduler's compose request: one project named after `project_name` (else the request id). */
function composeReplicaFromGo(request: agent.ApplyWorkloadRequest): ComposeReplica {
  const { spec, resources } = composeFromGo(request);
  return {
    id: request.id,
    workloadId: request.id,
    index: 0,
    generation: 0,
    revision: request.revisionId || revisionOf(request),
    desired: desiredOf(false, request.desiredState),
    kind: "compose",
    spec,
    resources,
    source: "go",
  };
}

/**
 * The revision a replica's runtime object is created from: the agent revision without the reboot
 * suffix `+b<n>` the control plane appends for in-place reboots (see `ReplicaAssignment.reboot_generation`).
 */
export function runtimeRevision(revision: string): string {
  return revision.replace(/\+b\d+$/, "");
}

/** The in-place reboots an agent revision asks for (its `+b<n>` suffix; 0 without one). */
export function rebootsOf(revision: string): number {
  const m = /\+b(\d+)$/.exec(revision);
  return m ? Number(m[1]) : 0;
}

/**
 * Whether `next` only asks for an in-place reboot of what `current` runs: same runtime revision,
 * more reboots, both desired running, from the Persys control plane.
 */
export function isRebootOnly(current: DesiredReplica, next: DesiredReplica): boolean {
  return (
    next.source === "persys" &&
    current.desired === "running" &&
    next.desired === "running" &&
    current.kind === next.kind &&
    runtimeRevision(current.revision) === runtimeRevision(next.revision) &&
    rebootsOf(next.revision) > rebootsOf(current.revision)
  );
}

/** The container labels (beyond the user's) every runtime object of a replica carries. */
export function replicaLabels(replica: DesiredReplica, nodeId: string): Record<string, string> {
  return {
    "persys.managed": "true",
    "persys.workload": replica.workloadId,
    "persys.replica": String(replica.index),
    "persys.revision": replica.revision,
    "persys.node": nodeId,
    "persys.generation": String(replica.generation),
    "persys.id": replica.id,
  };
}
