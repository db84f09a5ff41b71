import { api } from "@persys/schema";
import { eventEvidence, evidence } from "../intelligence/evidence.js";
import { eventsSince, type IntelligenceSources } from "../intelligence/intelligence-sources.js";
import { recommend } from "../intelligence/recommendations.js";
import { usageSeries } from "../nodes/usage-recorder.js";
import { cronMatches, parseCron } from "./cron-schedule.js";
import { POLICY_DEFAULTS } from "./policy-validation.js";

/** What a trigger saw in one evaluation. */
export interface TriggerResult {
  readonly matched: boolean;
  /** One line, e.g. "cpu of web 91.0 % > 80 % over 5 s (24 points)". */
  readonly observed: string;
  readonly evidence: api.Evidence[];
  /** The node the trigger is about, for cordon/drain without a node of their own. */
  readonly nodeId?: string;
  /** The workload (and replica) a finding names, for move without a workload of its own. */
  readonly workloadId?: string;
  readonly replicaIndex?: number;
}

const SERIES = api.EvidenceKind.EVIDENCE_KIND_SERIES;

/**
 * Evaluates a policy's `when` now. Reads only. `lastActedMs` is when the policy last acted (a cron
 * trigger fires once per matching minute).
 */
export async function evaluateTrigger(
  policy: api.Policy,
  sources: IntelligenceSources,
  now: number,
  lastActedMs: number | undefined,
): Promise<TriggerResult> {
  const trigger = policy.when?.trigger;
  switch (trigger?.$case) {
    case "metric":
      return metric(trigger.value, sources, now);
    case "cron": {
      const minute = Math.floor(now / 60_000);
      const fired = lastActedMs !== undefined && Math.floor(lastActedMs / 60_000) === minute;
      const matched = cronMatches(parseCron(trigger.value), new Date(now)) && !fired;
      return {
        matched,
        observed: `cron "${trigger.value}" ${matched ? "matches" : "does not match"} ${new Date(now).toISOString().slice(0, 16)}Z`,
        evidence: [],
      };
    }
    case "finding": {
      const found = (await recommend(sources, 3600)).filter(
        (r) => r.kind === trigger.value.kind && r.id.startsWith(trigger.value.idPrefix),
      );
      const first = found[0];
      return {
        matched: first !== undefined,
        observed: first ? `finding ${first.id}: ${first.summary}` : "no matching finding",
        evidence: first?.evidence ?? [],
        ...(first?.nodeId ? { nodeId: first.nodeId } : {}),
        ...(first?.workloadId ? { workloadId: first.workloadId } : {}),
        ...(first?.replicaIndex !== undefined ? { replicaIndex: first.replicaIndex } : {}),
      };
    }
    case "event": {
      const t = trigger.value;
      const window = (t.windowSeconds || POLICY_DEFAULTS.windowSeconds) * 1000;
      const pattern = new RegExp(t.messagePattern);
      const hits = (await eventsSince(sources, now - window, t.workloadId ? { workloadId: t.workloadId } : {})).filter(
        (e) => e.fields.type === t.type && pattern.test(e.fields.message ?? ""),
      );
      const need = Math.max(1, t.count);
      const last = hits.at(-1);
      return {
        matched: hits.length >= need,
        observed: `${hits.length} ${t.type} event(s) in ${window / 1000} s (need ${need})`,
        evidence: hits.slice(-5).map((e) => eventEvidence(e)),
        ...(last?.fields.node ? { nodeId: last.fields.node } : {}),
      };
    }
    default:
      return { matched: false, observed: "no trigger", evidence: [] };
  }
}

async function metric(m: api.MetricTrigger, sources: IntelligenceSources, now: number): Promise<TriggerResult> {
  const windowMs = (m.windowSeconds || POLICY_DEFAULTS.windowSeconds) * 1000;
  const cpu = m.metric === api.PolicyMetric.POLICY_METRIC_CPU_PERCENT;
  const name = cpu ? "cpu" : "memory";
  let series: string[] = [];
  let denominator = 0;
  let subject = "";
  if (m.workloadId) {
    const record = sources.state.workloads.get(m.workloadId);
    if (!record) return { matched: false, observed: `workload ${m.workloadId} does not exist`, evidence: [] };
    const workload = sources.workloads.get({ workloadId: m.workloadId, view: api.WorkloadView.WORKLOAD_VIEW_BASIC })
      .workload!;
    const running = (workload.status?.replicas ?? []).filter((r) => r.state === api.ReplicaState.REPLICA_STATE_RUNNING);
    series = running.map((r) =>
      cpu ? usageSeries.replicaCpu(m.workloadId, r.index) : usageSeries.replicaMemory(m.workloadId, r.index),
    );
    denominator = (cpu ? workload.resources?.cpuMillicores : workload.resources?.memoryMib) ?? 0;
    subject = m.workloadId;
  } else {
    const record = sources.state.nodes.get(m.nodeId);
    if (!record) return { matched: false, observed: `node ${m.nodeId} does not exist`, evidence: [] };
    const node = sources.nodes.nodeView(record.value);
    series = [cpu ? usageSeries.nodeCpu(m.nodeId) : usageSeries.nodeMemory(m.nodeId)];
    denominator = (cpu ? node.capacity?.cpuMillicores : node.capacity?.memoryMib) ?? 0;
    subject = m.nodeId;
  }
  const values: number[] = [];
  for (const s of series) values.push(...(await sources.events.range(s, now - windowMs, now)).map((p) => p.value));
  if (values.length === 0 || denominator <= 0) {
    return { matched: false, observed: `${name} of ${subject}: no samples in ${windowMs / 1000} s`, evidence: [] };
  }
  const percent = (100 * values.reduce((a, b) => a + b, 0)) / values.length / denominator;
  const matched = m.below ? percent < m.threshold : percent > m.threshold;
  const op = m.below ? "<" : ">";
  return {
    matched,
    observed: `${name} of ${subject} ${percent.toFixed(1)} % ${matched ? op : m.below ? "≥" : "≤"} ${m.threshold} % over ${windowMs / 1000} s (${values.length} points)`,
    evidence: series.map((s) => evidence(SERIES, s, `${name} use`, m.nodeId ? { nodeId: m.nodeId } : {})),
    ...(m.nodeId ? { nodeId: m.nodeId } : {}),
  };
}
