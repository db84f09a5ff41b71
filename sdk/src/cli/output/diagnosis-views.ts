import { api, enumLabel } from "../../index.js";
import type { Colours } from "../cli-io.js";
import { renderTable } from "./table.js";

/** `INSUFFICIENT_MEMORY` → `insufficient memory`; text already in words stays as is. */
export function reasonWords(reason: string): string {
  const match = /^([A-Z][A-Z0-9_]*)(.*)$/.exec(reason);
  if (!match) return reason;
  const rest = match[2] ?? "";
  return `${match[1]!.toLowerCase().replaceAll("_", " ")}${rest.startsWith("(") ? ` ${rest}` : rest}`;
}

const round = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/**
 * A placement diagnosis as indented lines: the one-line message, the node counts, every filter's
 * refusals, how short each resource dimension is, and the best candidates with their scores.
 */
export function diagnosisLines(d: api.PlacementDiagnosis, indent: string, c: Colours): string[] {
  const out: string[] = [];
  if (d.message) out.push(`${indent}${d.winnerNodeId ? d.message : c.yellow(d.message)}`);
  out.push(`${indent}nodes: ${d.nodesEvaluated} evaluated, ${d.feasibleNodes} feasible, ${d.scoredNodes} scored`);
  if (d.filterCounts.length > 0) {
    out.push(`${indent}filtered out:`);
    for (const f of d.filterCounts) out.push(`${indent}  ${f.count} ${reasonWords(f.reason)} (${f.plugin})`);
  }
  for (const e of d.exhaustion) {
    out.push(
      `${indent}${enumLabel(api.ResourceDimension, e.dimension)}: need ${e.needed} ${e.unit}, most free ${e.bestAvailable} ${e.unit} (${e.nodesShort} short)`,
    );
  }
  if (d.candidates.length > 0) {
    out.push(`${indent}candidates:`);
    const rows = d.candidates.map((cand) => [
      cand.nodeId === d.winnerNodeId ? c.green(cand.nodeId) : cand.nodeId,
      round(cand.totalScore),
      cand.scores.map((s) => `${s.plugin} ${round(s.score)}×${round(s.weight)}`).join(", "),
    ]);
    const table = renderTable(["NODE", "SCORE", "BREAKDOWN"], rows);
    for (const line of table.trimEnd().split("\n")) out.push(`${indent}  ${line}`);
  }
  if (d.winnerNodeId) out.push(`${indent}chosen: ${d.winnerNodeId}`);
  return out;
}

/** A replica's reason: `UNSCHEDULABLE: 0/3 nodes are available: ... (retrying, attempt 2)`. */
export function reasonText(reason: api.Reason | undefined): string {
  if (!reason || (!reason.message && !reason.code)) return "";
  const code = reason.code ? `${api.ErrorCode[reason.code] ?? reason.code}: ` : "";
  const retry =
    reason.code && reason.retryable ? ` (retrying${reason.attempts ? `, attempt ${reason.attempts}` : ""})` : "";
  return `${code}${reason.message}${retry}`;
}

/** `persysctl explain`: every replica's node, state, reason and diagnosis. */
export function explainText(e: api.ExplainWorkloadResponse, c: Colours): string {
  const lines = [`${c.bold(`Workload ${e.workloadId}`)} (revision ${e.revision || "none"})`];
  if (e.replicas.length === 0) lines.push("  no replicas (replicas: 0)");
  for (const r of e.replicas) {
    const where = r.nodeId ? ` on ${r.nodeId}` : "";
    lines.push(`Replica ${r.replicaIndex}: ${enumLabel(api.ReplicaState, r.state)}${where}`);
    const reason = reasonText(r.reason);
    if (reason && r.reason?.message !== r.diagnosis?.message) lines.push(`  reason: ${reason}`);
    if (r.diagnosis) lines.push(...diagnosisLines(r.diagnosis, "  ", c));
    else lines.push("  not looked at by the scheduler yet");
  }
  return `${lines.join("\n")}\n`;
}

/** `persysctl plan`: per replica the action, the node and the scheduler's run. */
export function planText(id: string, p: api.PlanWorkloadResponse, c: Colours): string {
  const verdict = p.schedulable ? c.green("schedulable") : c.red("not schedulable");
  const change = p.changed ? "would change" : "no change";
  const lines = [`${c.bold(id)}: ${verdict}, ${change} (revision ${p.revision})`];
  for (const r of p.replicas) {
    const action = enumLabel(api.PlanAction, r.action);
    lines.push(
      `  replica ${r.replicaIndex}: ${action}${r.nodeId ? ` on ${r.nodeId}` : r.diagnosis ? " — no node" : ""}`,
    );
    if (r.diagnosis) lines.push(...diagnosisLines(r.diagnosis, "    ", c));
  }
  return `${lines.join("\n")}\n`;
}
