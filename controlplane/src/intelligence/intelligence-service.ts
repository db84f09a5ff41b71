import { type api, invalid, PersysError } from "@persys/schema";
import { ask } from "./ask-question.js";
import { forecastCapacity } from "./capacity-forecast.js";
import { type IntelligenceSources, WINDOW } from "./intelligence-sources.js";
import type { ModelEndpoint } from "./model-wording.js";
import { recommend } from "./recommendations.js";
import { diagnoseWorkload } from "./workload-diagnosis.js";

function windowOf(seconds: number, path: string): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > WINDOW.maxSeconds) {
    throw invalid("INVALID_ARGUMENT", [{ path, reason: `must be 0..${WINDOW.maxSeconds} seconds (0: one hour)` }]);
  }
  return seconds === 0 ? WINDOW.defaultSeconds : seconds;
}

/**
 * The `persys.api.v1.IntelligenceService` of the control plane. Every server answers (from its own
 * state cache and the shared event store); nothing here writes to the state store.
 */
export class IntelligenceService {
  constructor(
    private readonly sources: IntelligenceSources,
    private readonly model?: ModelEndpoint,
  ) {}

  async diagnose(request: api.DiagnoseWorkloadRequest): Promise<api.DiagnoseWorkloadResponse> {
    if (!request.workloadId) throw invalid("INVALID_ARGUMENT", [{ path: "workloadId", reason: "is required" }]);
    const window = windowOf(request.windowSeconds, "windowSeconds");
    return { diagnosis: await diagnoseWorkload(this.sources, request.workloadId, window) };
  }

  async forecast(request: api.GetForecastRequest): Promise<api.GetForecastResponse> {
    const window = windowOf(request.windowSeconds, "windowSeconds");
    if (request.nodeId && !this.sources.state.nodes.has(request.nodeId)) {
      throw new PersysError("NOT_FOUND", `node ${request.nodeId} not found`, {
        details: [{ path: "nodeId", reason: "no such node" }],
      });
    }
    const forecasts = await forecastCapacity(this.sources, {
      nodeId: request.nodeId,
      windowSeconds: window,
      method: request.method,
    });
    return { forecasts, generatedAt: new Date(this.sources.now()) };
  }

  async recommendations(request: api.ListRecommendationsRequest): Promise<api.ListRecommendationsResponse> {
    const window = windowOf(request.windowSeconds, "windowSeconds");
    return { recommendations: await recommend(this.sources, window), generatedAt: new Date(this.sources.now()) };
  }

  async ask(request: api.AskRequest): Promise<api.AskResponse> {
    const question = request.question.trim();
    if (!question) throw invalid("INVALID_ARGUMENT", [{ path: "question", reason: "is required" }]);
    if (question.length > 2000)
      throw invalid("INVALID_ARGUMENT", [{ path: "question", reason: "is longer than 2000 characters" }]);
    return ask(this.sources, question, WINDOW.defaultSeconds, this.model);
  }
}
