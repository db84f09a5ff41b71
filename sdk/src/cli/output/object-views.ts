import { api, enumLabel } from "../../index.js";
import type { Colours } from "../cli-io.js";
import { age } from "./table.js";

/** Headers of `get workloads`; `wide` adds revision, image, endpoints and labels. */
export function workloadHeaders(wide: boolean): string[] {
  const base = ["NAME", "KIND", "STATE", "READY", "NODES", "AGE"];
  return wide ? [...base, "REVISION", "IMAGE", "ENDPOINTS", "LABELS"] : base;
}

/** A state word coloured by how good it is. */
export function stateColour(state: string, c: Colours): string {
  if (state === "running" || state === "ready") return c.green(state);
  if (state === "failed" || state === "lost" || state === "not-ready") return c.red(state);
  if (state === "stopped") return c.dim(state);
  return c.yellow(state);
}

/** What the workload runs: image, compose source or VM base image. */
export function workloadImage(w: api.Workload): string {
  const spec = w.spec;
  if (!spec) return "";
  if (spec.$case === "container") return spec.value.image;
  if (spec.$case === "compose") {
    const source = spec.value.source;
    if (source?.$case === "git") return `${source.value.repo}${source.value.ref ? `@${source.value.ref}` : ""}`;
    return "(inline compose)";
  }
  return spec.value.baseImage?.value ?? "";
}

/** `127.0.0.1:8080->80/tcp` and VM addresses, comma-separated. */
export function endpointsText(endpoints: readonly api.Endpoint[]): string {
  return endpoints
    .map((e) =>
      e.kind === api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT
        ? `${e.address}:${e.port}->${e.targetPort}/${enumLabel(api.Protocol, e.protocol || api.Protocol.PROTOCOL_TCP)}`
        : e.address,
    )
    .join(",");
}

/** `k=v,k2=v2`, sorted by key. */
export function labelsText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** One row of `get workloads`. */
export function workloadRow(w: api.Workload, wide: boolean, now: Date, c: Colours): string[] {
  const s = w.status;
  const replicas = s?.replicas ?? [];
  const nodes = [...new Set(replicas.map((r) => r.nodeId).filter(Boolean))].sort().join(",");
  const row = [
    w.id,
    enumLabel(api.WorkloadKind, w.kind),
    stateColour(s ? enumLabel(api.WorkloadState, s.state) : "unknown", c),
    `${s?.readyReplicas ?? 0}/${w.replicas ?? 1}`,
    nodes || "<none>",
    age(s?.createdAt, now),
  ];
  if (!wide) return row;
  return [
    ...row,
    s?.revision ?? "",
    workloadImage(w),
    endpointsText(replicas.flatMap((r) => r.endpoints)) || "<none>",
    labelsText(w.labels) || "<none>",
  ];
}

/** Headers of `get nodes`. */
export function nodeHeaders(wide: boolean): string[] {
  const base = ["NAME", "STATE", "CPU", "MEMORY", "REPLICAS", "AGE"];
  return wide ? [...base, "ARCH", "CAPABILITIES", "AGENT", "LABELS"] : base;
}

/** `ready`, `ready,cordoned`, `ready,draining`, `not-ready`, `lost`. */
export function nodeStateText(n: api.Node): string {
  const flags = [enumLabel(api.NodeState, n.state)];
  if (n.draining) flags.push("draining");
  else if (n.cordoned) flags.push("cordoned");
  return flags.join(",");
}

/** One row of `get nodes`: allocated over allocatable for CPU and memory. */
export function nodeRow(n: api.Node, wide: boolean, now: Date, c: Colours): string[] {
  const cpu = `${n.allocated?.cpuMillicores ?? 0}m/${n.allocatable?.cpuMillicores ?? 0}m`;
  const memory = `${n.allocated?.memoryMib ?? 0}Mi/${n.allocatable?.memoryMib ?? 0}Mi`;
  const state = nodeStateText(n);
  const row = [
    n.id,
    n.cordoned ? c.yellow(state) : stateColour(state, c),
    cpu,
    memory,
    String(n.replicaCount),
    age(n.registeredAt, now),
  ];
  if (!wide) return row;
  return [
    ...row,
    n.arch || "<none>",
    n.capabilities.join(",") || "<none>",
    n.agentVersion || "<none>",
    labelsText(n.labels) || "<none>",
  ];
}

/** Headers of `get events`. */
export const eventHeaders = ["AGE", "SEVERITY", "TYPE", "OBJECT", "MESSAGE"];

/** `workload/web[0]`, `node/n1`, or `cluster`. */
export function eventObject(e: api.Event): string {
  if (e.workloadId) return `workload/${e.workloadId}${e.replicaIndex === undefined ? "" : `[${e.replicaIndex}]`}`;
  if (e.nodeId) return `node/${e.nodeId}`;
  return "cluster";
}

/** One row of `get events`. */
export function eventRow(e: api.Event, now: Date, c: Colours): string[] {
  const severity = enumLabel(api.EventSeverity, e.severity);
  const coloured =
    e.severity === api.EventSeverity.EVENT_SEVERITY_ERROR
      ? c.red(severity)
      : e.severity === api.EventSeverity.EVENT_SEVERITY_WARNING
        ? c.yellow(severity)
        : severity;
  return [age(e.time, now), coloured, e.type, eventObject(e), e.message];
}
