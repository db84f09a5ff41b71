import type { ComposeProject, ComposeService } from "@persys/schema";
import type Docker from "dockerode";
import type { LogRotation } from "../docker/container-options.js";
import { containerComposeLabels, type ProjectIdentity } from "./compose-labels.js";

/** Docker names of a project's networks and volumes (`<project>_<key>` unless named). */
export function networkName(project: ComposeProject, projectName: string, key: string): string {
  const n = project.networks.find((x) => x.key === key);
  return n?.name ?? `${projectName}_${key}`;
}

export function volumeName(project: ComposeProject, projectName: string, key: string): string {
  const v = project.volumes.find((x) => x.key === key);
  return v?.name ?? `${projectName}_${key}`;
}

/** Container name of service replica `number` (1-based), as Compose v2 names it. */
export function containerName(projectName: string, service: string, number: number): string {
  return `${projectName}-${service}-${number}`;
}

const ns = (ms: number) => Math.round(ms * 1_000_000);

/**
 * Docker create options for one container of a compose service: the service's image, command,
 * environment, ports, mounts, healthcheck, restart policy and limits, attached to its first project
 * network (the others are connected after create, see the deployer), with the service name and
 * aliases as network aliases and the Compose and Persys labels.
 */
export function composeContainerOptions(
  project: ComposeProject,
  id: ProjectIdentity,
  s: ComposeService,
  number: number,
  hash: string,
  persysLabels: Record<string, string>,
  userLabels: Readonly<Record<string, string>>,
  logs?: LogRotation,
): Docker.ContainerCreateOptions {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, { HostIp: string; HostPort: string }[]> = {};
  for (const e of s.expose) exposed[e.includes("/") ? e : `${e}/tcp`] = {};
  for (const p of s.ports) {
    const key = `${p.target}/${p.protocol}`;
    exposed[key] = {};
    const list = bindings[key] ?? [];
    list.push({ HostIp: p.hostIp, HostPort: p.published ? String(p.published) : "" });
    bindings[key] = list;
  }
  const networks = Object.entries(s.networks);
  const first = networks[0];
  const mode = s.networkMode || (first ? networkName(project, id.project, first[0]) : "bridge");
  const h = s.healthcheck;
  return {
    name: containerName(id.project, s.name, number),
    Image: s.image,
    ...(s.command ? { Cmd: [...s.command] } : {}),
    ...(s.entrypoint ? { Entrypoint: [...s.entrypoint] } : {}),
    Env: Object.entries(s.environment).map(([k, v]) => `${k}=${v}`),
    Labels: {
      ...userLabels,
      ...s.labels,
      ...containerComposeLabels(id, s.name, number, hash, Object.keys(s.dependsOn)),
      ...persysLabels,
      "persys.compose.service": s.name,
    },
    ExposedPorts: exposed,
    ...(s.user ? { User: s.user } : {}),
    ...(s.workingDir ? { WorkingDir: s.workingDir } : {}),
    ...(s.hostname ? { Hostname: s.hostname } : {}),
    ...(s.stopSignal ? { StopSignal: s.stopSignal } : {}),
    StopTimeout: Math.ceil(s.stopGracePeriodMs / 1000),
    Tty: s.tty,
    OpenStdin: s.stdinOpen,
    ...(h
      ? {
          Healthcheck: {
            Test: [...h.test],
            Interval: ns(h.intervalMs),
            Timeout: ns(h.timeoutMs),
            StartPeriod: ns(h.startPeriodMs),
            Retries: h.retries,
          },
        }
      : {}),
    HostConfig: {
      NetworkMode: mode,
      PortBindings: bindings,
      RestartPolicy: {
        Name: s.restart === "no" ? "" : s.restart,
        ...(s.restart === "on-failure" ? { MaximumRetryCount: s.restartMaxRetries } : {}),
      },
      Mounts: s.volumes.map((m) => ({
        Type: m.type,
        Source: m.type === "volume" && m.source ? volumeName(project, id.project, m.source) : m.source,
        Target: m.target,
        ReadOnly: m.readOnly,
      })),
      ...(s.limits.cpus ? { NanoCpus: Math.round(s.limits.cpus * 1e9) } : {}),
      ...(s.limits.memoryBytes ? { Memory: s.limits.memoryBytes } : {}),
      ...(s.reservations.memoryBytes ? { MemoryReservation: s.reservations.memoryBytes } : {}),
      Privileged: s.privileged,
      Init: s.init,
      ReadonlyRootfs: s.readOnly,
      CapAdd: [...s.capAdd],
      CapDrop: [...s.capDrop],
      ExtraHosts: [...s.extraHosts],
      Tmpfs: Object.fromEntries(s.tmpfs.map((t) => [t.split(":")[0]!, t.split(":")[1] ?? ""])),
      ...(logs && logs.maxSizeMib > 0
        ? {
            LogConfig: {
              Type: "json-file",
              Config: { "max-size": `${logs.maxSizeMib}m`, "max-file": String(Math.max(1, logs.maxFiles)) },
            },
          }
        : {}),
    },
    ...(first && !s.networkMode
      ? {
          NetworkingConfig: {
            EndpointsConfig: {
              [networkName(project, id.project, first[0])]: { Aliases: [s.name, ...first[1].aliases] },
            },
          },
        }
      : {}),
  };
}
