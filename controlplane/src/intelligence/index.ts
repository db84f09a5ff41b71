/**
 * Intelligence: explanations with cited evidence, capacity forecasts, recommendations and answers
 * to questions, read from the cluster state, the event store and usage series. Deterministic rules
 * at the core; an optional OpenAI-compatible endpoint only rewords answers. Never mutates.
 * See docs/intelligence.md.
 */
export { ask, understand } from "./ask-question.js";
export { forecastCapacity } from "./capacity-forecast.js";
export { IntelligenceService } from "./intelligence-service.js";
export type { IntelligenceSources } from "./intelligence-sources.js";
export { rankLexically, tokens } from "./lexical-ranking.js";
export { type ModelEndpoint, wordAnswer } from "./model-wording.js";
export { recommend } from "./recommendations.js";
export { ReservationSampler, reservationSeries } from "./reservation-sampler.js";
export { crossing, fitHolt, fitLinear, quantile } from "./trend-fit.js";
export { diagnoseWorkload } from "./workload-diagnosis.js";
