import type Docker from "dockerode";
import { type ContainerReplica, replicaLabels } from "../../replicas/desired-replica.js";
import type { MaterialisedSecrets } from "../../replicas/replica-secrets.js";

/** Log rotation applied to every container (json-file driver); `maxSizeMib` 0 keeps the daemon's default. */
export interface LogRotation {
  readonly maxSizeMib: number;
  readonly maxFiles: number;
}

const NS_PER_SECOND = 1_000_000_000;

/** Docker's name for a replica's `managed` (Go) volume: namespaced so it cannot clash with the user's. */
export function managedVolumeName(name: string): string {
  return `persys-${name}`;
}

/**
 * The Docker create options of a replica's container: its name, the Persys labels
 * (`persys.managed`, `persys.workload`, `persys.replica`, `persys.revision`, `persys.node`, plus
 * generation and id) over the user's labels, command, env, published ports (host ip/port/protocol),
 * bind and named volume mounts, hard limits (NanoCpus, Memory), restart policy, healthcheck, user,
 * working dir and stop timeout. Pure: the same replica always gives the same options.
 */
export function containerCreateOptions(
  replica: ContainerReplica,
  options: {
    readonly name: string;
    readonly nodeId: string;
    readonly logs?: LogRotation;
    /** Secret env values and files (read-only bind mounts), resolved for this create only. */
    readonly secrets?: MaterialisedSecrets;
  },
): Docker.ContainerCreateOptions {
  const s = replica.spec;
  const exposed: Record<string, object> = {};
  const bindings: Record<string, { HostIp: string; HostPort: string }[]> = {};
  for (const p of s.ports) {
    const key = `${p.containerPort}/${p.protocol}`;
    exposed[key] = {};
    if (p.hostPort > 0) {
      const list = bindings[key] ?? [];
      list.push({ HostIp: p.hostIp, HostPort: String(p.hostPort) });
      bindings[key] = list;
    }
  }
  const health = s.healthcheck;
  const hostConfig: Docker.HostConfig = {
    PortBindings: bindings,
    Mounts: [
      ...s.mounts.map((m) => ({
        Type: m.kind === "bind" ? ("bind" as const) : ("volume" as const),
        Source: m.kind === "managed" ? managedVolumeName(m.source) : m.source,
        Target: m.target,
        ReadOnly: m.readOnly,
      })),
      ...(options.secrets?.files ?? []).map((f) => ({
        Type: "bind" as const,
        Source: f.source,
        Target: f.target,
        ReadOnly: true,
      })),
    ],
    RestartPolicy: {
      Name: s.restart.mode,
      ...(s.restart.mode === "on-failure" ? { MaximumRetryCount: s.restart.maxRetries } : {}),
    },
    ...(s.limits.nanoCpus > 0 ? { NanoCpus: s.limits.nanoCpus } : {}),
    ...(s.limits.memoryBytes > 0 ? { Memory: s.limits.memoryBytes } : {}),
    ...(s.limits.memorySwapBytes > 0 ? { MemorySwap: s.limits.memorySwapBytes } : {}),
    ...(s.limits.cpuShares > 0 ? { CpuShares: s.limits.cpuShares } : {}),
    ...(s.privileged ? { Privileged: true } : {}),
    ...(s.hostNetwork ? { NetworkMode: "host" } : {}),
    ...(s.devices?.length
      ? {
          Devices: s.devices.map((d) => {
            const [host = "", inside, permissions] = d.split(":");
            return { PathOnHost: host, PathInContainer: inside || host, CgroupPermissions: permissions || "rwm" };
          }),
        }
      : {}),
    ...(options.logs && options.logs.maxSizeMib > 0
      ? {
          LogConfig: {
            Type: "json-file",
            Config: {
              "max-size": `${options.logs.maxSizeMib}m`,
              "max-file": String(Math.max(1, options.logs.maxFiles)),
            },
          },
        }
      : {}),
  };
  return {
    name: options.name,
    Image: s.image,
    ...(s.entrypoint ? { Entrypoint: [...s.entrypoint] } : {}),
    ...(s.cmd ? { Cmd: [...s.cmd] } : {}),
    Env: Object.entries({ ...s.env, ...options.secrets?.env }).map(([k, v]) => `${k}=${v}`),
    Labels: { ...s.labels, ...replicaLabels(replica, options.nodeId) },
    ExposedPorts: exposed,
    StopTimeout: s.stopTimeoutSeconds,
    ...(s.user ? { User: s.user } : {}),
    ...(s.workingDir ? { WorkingDir: s.workingDir } : {}),
    ...(health
      ? {
          Healthcheck: {
            Test: ["CMD", ...health.command],
            ...(health.intervalSeconds > 0 ? { Interval: health.intervalSeconds * NS_PER_SECOND } : {}),
            ...(health.timeoutSeconds > 0 ? { Timeout: health.timeoutSeconds * NS_PER_SECOND } : {}),
            ...(health.retries > 0 ? { Retries: health.retries } : {}),
            ...(health.startPeriodSeconds > 0 ? { StartPeriod: health.startPeriodSeconds * NS_PER_SECOND } : {}),
          },
        }
      : {}),
    HostConfig: hostConfig,
  };
}
