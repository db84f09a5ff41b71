import { api } from "@persys/schema";
import { forecastCapacity } from "./capacity-forecast.js";
import type { IntelligenceSources } from "./intelligence-sources.js";
import { tokens } from "./lexical-ranking.js";
import { type ModelEndpoint, wordAnswer } from "./model-wording.js";
import { recommend } from "./recommendations.js";
import { diagnoseWorkload } from "./workload-diagnosis.js";

export type Intent = "diagnose" | "forecast" | "recommend" | "summary";

const FORECAST_WORDS = ["when", "forecast", "run", "full", "exhaust", "capacity", "left", "until", "fill"];
const RECOMMEND_WORDS = [
  "recommend",
  "should",
  "improve",
  "optimise",
  "optimize",
  "right-size",
  "rebalance",
  "waste",
  "oversized",
  "advice",
  "suggest",
];

/** How a question is understood: its intent and the workload or node it names, from the cluster's ids. */
export function understand(
  question: string,
  names: { workloads: readonly string[]; nodes: readonly string[] },
): { intent: Intent; workloadId?: string; nodeId?: string } {
  const words = tokens(question);
  const set = new Set(words);
  const workloadId = names.workloads.find((w) => set.has(w.toLowerCase()));
  const nodeId = names.nodes.find((n) => set.has(n.toLowerCase()));
  const any = (list: readonly string[]) => list.some((w) => set.has(w) || words.some((x) => x.startsWith(w)));
  if (any(RECOMMEND_WORDS))
    return { intent: "recommend", ...(workloadId ? { workloadId } : {}), ...(nodeId ? { nodeId } : {}) };
  if (any(FORECAST_WORDS) && !workloadId) return { intent: "forecast", ...(nodeId ? { nodeId } : {}) };
  if (workloadId) return { intent: "diagnose", workloadId };
  if (nodeId) return { intent: "forecast", nodeId };
  return { intent: "summary" };
}

/**
 * Answers a question from the findings of the rules: a workload named → its diagnosis; "when … run
 * out" → forecasts; "should …" → recommendations; anything else → the workloads that are not
 * running and the recommendations. The answer is complete without a model; with `model` set its
 * wording may be replaced (see model-wording.ts), the findings never.
 */
export async function ask(
  sources: IntelligenceSources,
  question: string,
  windowSeconds: number,
  model?: ModelEndpoint,
): Promise<api.AskResponse> {
  const workloads = [...sources.state.workloads.keys()];
  const nodes = [...sources.state.nodes.keys()];
  const understood = understand(question, { workloads, nodes });
  const response: api.AskResponse = {
    answer: "",
    intent: understood.intent,
    evidence: [],
    forecasts: [],
    recommendations: [],
    wordedBy: "",
  };
  if (understood.intent === "diagnose" && understood.workloadId) {
    const diagnosis = await diagnoseWorkload(sources, understood.workloadId, windowSeconds);
    response.diagnosis = diagnosis;
    response.evidence = diagnosis.causes.flatMap((c) => c.evidence);
    const cited = [
      ...new Set(response.evidence.filter((e) => e.kind === api.EvidenceKind.EVIDENCE_KIND_EVENT).map((e) => e.ref)),
    ];
    response.answer = `${diagnosis.summary}${cited.length ? ` Evidence: event(s) ${cited.join(", ")}.` : ""}`;
  } else if (understood.intent === "forecast") {
    const forecasts = await forecastCapacity(sources, {
      nodeId: understood.nodeId ?? "",
      windowSeconds,
      method: api.ForecastMethod.FORECAST_METHOD_UNSPECIFIED,
    });
    const running = forecasts
      .filter((f) => f.secondsToExhaustion !== undefined)
      .sort((a, b) => a.secondsToExhaustion! - b.secondsToExhaustion!);
    response.forecasts = running.length ? running : forecasts;
    response.evidence = response.forecasts.map((f) => ({
      kind: api.EvidenceKind.EVIDENCE_KIND_SERIES,
      ref: f.series,
      summary: f.message,
      relevance: 0,
      type: "",
      nodeId: f.nodeId,
    }));
    response.answer = running.length
      ? `Soonest first: ${running
          .slice(0, 3)
          .map((f) => f.message)
          .join("; ")}.`
      : `Nothing runs out on the current trend${understood.nodeId ? ` on ${understood.nodeId}` : ""} (${forecasts.length} series fitted).`;
  } else {
    const recommendations = (await recommend(sources, windowSeconds)).filter(
      (r) =>
        (!understood.workloadId || r.workloadId === understood.workloadId) &&
        (!understood.nodeId || r.nodeId === understood.nodeId),
    );
    response.recommendations = recommendations;
    response.evidence = recommendations.flatMap((r) => r.evidence);
    const lines = recommendations.slice(0, 5).map((r) => `${r.summary} → ${r.action} (${r.expectedEffect})`);
    if (understood.intent === "summary") {
      const troubled = await troubledWorkloads(sources, windowSeconds);
      response.evidence.push(...troubled.flatMap((d) => d.causes.flatMap((c) => c.evidence)));
      const parts = troubled.map((d) => d.summary);
      response.answer =
        [...parts, ...lines].join(" ") ||
        `All ${workloads.length} workload(s) are where they should be and there is nothing to recommend.`;
    } else {
      response.answer = lines.length ? lines.join(". ") : "Nothing to recommend now.";
    }
  }
  if (model) {
    const wording = await wordAnswer(model, {
      question,
      answer: response.answer,
      findings: api.AskResponse.toJSON({ ...response, answer: "" }),
      knownNames: [...workloads, ...nodes],
    });
    if ("text" in wording) {
      response.answer = wording.text;
      response.wordedBy = wording.model;
    }
  }
  return response;
}

async function troubledWorkloads(
  sources: IntelligenceSources,
  windowSeconds: number,
): Promise<api.WorkloadDiagnosis[]> {
  const out: api.WorkloadDiagnosis[] = [];
  const settled = new Set([api.WorkloadState.WORKLOAD_STATE_RUNNING, api.WorkloadState.WORKLOAD_STATE_STOPPED]);
  for (const id of [...sources.state.workloads.keys()].sort()) {
    // Only workloads that are not where they should be are worth the event reads of a diagnosis.
    const state = sources.workloads.get({ workloadId: id, view: api.WorkloadView.WORKLOAD_VIEW_BASIC }).workload?.status
      ?.state;
    if (state !== undefined && settled.has(state)) continue;
    const d = await diagnoseWorkload(sources, id, windowSeconds);
    if (d.causes.length > 0) out.push(d);
    if (out.length === 5) break;
  }
  return out;
}
