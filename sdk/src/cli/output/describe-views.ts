import { stringify } from "yaml";
import { api, enumLabel, specDocumentOf } from "../../index.js";
import type { Colours } from "../cli-io.js";
import { diagnosisLines, reasonText } from "./diagnosis-views.js";
import { endpointsText, eventRow, labelsText, nodeStateText, stateColour } from "./object-views.js";
import { age, renderFields, renderTable } from "./table.js";

const when = (time: Date | undefined, now: Date) =>
  time ? `${time.toISOString()} (${age(time, now)} ago)` : "<unknown>";

const indentBlock = (text: string, indent: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((line) => `${indent}${line}`)
    .join("\n");

function resourcesText(r: api.Resources | undefined): string {
  return `cpu ${r?.cpuMillicores ?? 0}m, memory ${r?.memoryMib ?? 0} MiB, disk ${r?.diskGib ?? 0} GiB per replica`;
}

function specYaml(w: api.Workload): string {
  const spec = w.spec;
  if (!spec) return "<none>";
  return stringify({ [spec.$case]: specDocumentOf(w)[spec.$case] }, { lineWidth: 0 });
}

/**
 * `persysctl describe workload`: the spec, each replica (node, state, reason), the placement
 * diagnoses and recent events, for a person to read.
 */
export function describeWorkload(w: api.Workload, events: readonly api.Event[], now: Date, c: Colours): string {
  const s = w.status;
  const state = s ? enumLabel(api.WorkloadState, s.state) : "unknown";
  const placement = w.placement ? api.Placement.toJSON(w.placement) : {};
  const fields: [string, string][] = [
    ["Name", w.id],
    ["Kind", enumLabel(api.WorkloadKind, w.kind)],
    ["State", `${stateColour(state, c)} (${s?.readyReplicas ?? 0}/${w.replicas ?? 1} ready)`],
    ["Desired", enumLabel(api.DesiredState, w.desiredState || api.DesiredState.DESIRED_STATE_RUNNING)],
    [
      "Revision",
      `${s?.revision || "<none>"} (generation ${s?.generation ?? 0}, observed ${s?.observedGeneration ?? 0})`,
    ],
    ["Labels", labelsText(w.labels) || "<none>"],
    ["Created", when(s?.createdAt, now)],
    ["Updated", when(s?.updatedAt, now)],
    ["Resources", resourcesText(w.resources)],
    ["Placement", Object.keys(placement as object).length ? JSON.stringify(placement) : "<none>"],
  ];
  const out = [renderFields(fields), "Spec:\n", `${indentBlock(specYaml(w), "  ")}\n`];
  const replicas = s?.replicas ?? [];
  out.push("Replicas:\n");
  if (replicas.length === 0) out.push("  <none>\n");
  else {
    const rows = replicas.map((r) => [
      String(r.index),
      r.nodeId || "<none>",
      stateColour(enumLabel(api.ReplicaState, r.state), c),
      String(r.restartCount),
      age(r.lastTransitionAt ?? r.startedAt, now),
      endpointsText(r.endpoints) || "<none>",
      reasonText(r.reason),
    ]);
    out.push(
      `${indentBlock(renderTable(["INDEX", "NODE", "STATE", "RESTARTS", "SINCE", "ENDPOINTS", "REASON"], rows), "  ")}\n`,
    );
  }
  out.push("Placement diagnosis:\n");
  const diagnosed = replicas.filter((r) => r.placement);
  if (diagnosed.length === 0) out.push("  <none yet>\n");
  for (const r of diagnosed) {
    out.push(`  replica ${r.index}:\n`);
    out.push(`${diagnosisLines(r.placement!, "    ", c).join("\n")}\n`);
  }
  out.push("Events:\n");
  if (events.length === 0) out.push("  <none>\n");
  else {
    const rows = events.map((e) => eventRow(e, now, c));
    out.push(`${indentBlock(renderTable(["AGE", "SEVERITY", "TYPE", "OBJECT", "MESSAGE"], rows), "  ")}\n`);
  }
  return out.join("");
}

/** `persysctl describe node`: state, resources, capabilities, conditions. */
export function describeNode(n: api.Node, now: Date, c: Colours): string {
  const res = (r: api.Resources | undefined) =>
    `cpu ${r?.cpuMillicores ?? 0}m, memory ${r?.memoryMib ?? 0} MiB, disk ${r?.diskGib ?? 0} GiB`;
  const fields: [string, string][] = [
    ["Name", n.id],
    ["State", stateColour(nodeStateText(n), c)],
    ["Cordon reason", n.cordonReason || "<none>"],
    ["Labels", labelsText(n.labels) || "<none>"],
    ["Capabilities", n.capabilities.join(",") || "<none>"],
    ["Kinds", n.supportedKinds.map((k) => enumLabel(api.WorkloadKind, k)).join(",") || "<none>"],
    ["Platform", `${n.os || "?"}/${n.arch || "?"}`],
    ["Agent", `${n.agentVersion || "<unknown>"} at ${n.agentEndpoint || "<unknown>"}`],
    ["Capacity", res(n.capacity)],
    ["Allocatable", res(n.allocatable)],
    ["Allocated", res(n.allocated)],
    ["Usage", res(n.usage)],
    ["Replicas", String(n.replicaCount)],
    ["Registered", when(n.registeredAt, now)],
    ["Last heartbeat", when(n.lastHeartbeatAt, now)],
  ];
  const out = [renderFields(fields), "Conditions:\n"];
  if (n.conditions.length === 0) out.push("  <none>\n");
  else {
    const rows = n.conditions.map((cond) => [
      cond.type,
      enumLabel(api.ConditionStatus, cond.status),
      cond.reason,
      cond.message,
    ]);
    out.push(`${indentBlock(renderTable(["TYPE", "STATUS", "REASON", "MESSAGE"], rows), "  ")}\n`);
  }
  return out.join("");
}

/** `persysctl cluster status`. */
export function clusterStatusText(s: api.ClusterSummary, endpoint: string): string {
  const res = (r: api.Resources | undefined) =>
    `cpu ${r?.cpuMillicores ?? 0}m, memory ${r?.memoryMib ?? 0} MiB, disk ${r?.diskGib ?? 0} GiB`;
  return renderFields([
    ["Endpoint", endpoint],
    ["Version", s.version || "<unknown>"],
    ["Leader", s.leaderId || "<none>"],
    [
      "Nodes",
      `${s.nodesTotal} total: ${s.nodesReady} ready, ${s.nodesNotReady} not ready, ${s.nodesCordoned} cordoned`,
    ],
    [
      "Workloads",
      `${s.workloadsTotal} total: ${s.workloadsRunning} running, ${s.workloadsPending} pending, ${s.workloadsDegraded} degraded, ${s.workloadsFailed} failed, ${s.workloadsStopped} stopped`,
    ],
    [
      "Replicas",
      `${s.replicasTotal} total: ${s.replicasRunning} running, ${s.replicasPending} pending, ${s.replicasFailed} failed`,
    ],
    ["Allocatable", res(s.allocatable)],
    ["Allocated", res(s.allocated)],
    ["Usage", res(s.usage)],
  ]);
}
