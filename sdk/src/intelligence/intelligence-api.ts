import { api, PersysError } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";

/** Options of the intelligence reads: how far back events and series are read. */
export interface WindowOptions extends CallOptions {
  /** Seconds of history read (the server's default one hour, at most 7 days). */
  readonly windowSeconds?: number | undefined;
}

/** The trend method of {@link IntelligenceApi.forecast}. */
export type ForecastMethodName = "auto" | "linear" | "holt";

/** Options of {@link IntelligenceApi.forecast}. */
export interface ForecastOptions extends WindowOptions {
  /** One node; omitted: every node and the cluster. */
  readonly nodeId?: string | undefined;
  /** `auto` (default): Holt when it fits clearly better, else least squares. */
  readonly method?: ForecastMethodName | undefined;
}

const methods: Record<ForecastMethodName, api.ForecastMethod> = {
  auto: api.ForecastMethod.FORECAST_METHOD_UNSPECIFIED,
  linear: api.ForecastMethod.FORECAST_METHOD_LINEAR,
  holt: api.ForecastMethod.FORECAST_METHOD_HOLT,
};

/**
 * Explanations, forecasts and recommendations computed by the control plane from its state, events
 * and usage series. Every call only reads: none changes the cluster, so all are safe to retry.
 *
 * ```ts
 * const d = await client.intelligence.diagnose("web");
 * console.log(d.summary);
 * for (const cause of d.causes) console.log(cause.rule, cause.evidence.map((e) => e.ref));
 * const soonest = (await client.intelligence.forecast()).find((f) => f.secondsToExhaustion !== undefined);
 * ```
 */
export class IntelligenceApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.IntelligenceServiceClient,
  ) {}

  /**
   * Why the workload is where it is: causes from the symptom to the root, each citing its evidence
   * (event ids, diagnoses, node states), plus the window's most relevant events and remediations.
   * Rejects with NOT_FOUND for an unknown workload.
   */
  async diagnose(workloadId: string, options: WindowOptions = {}): Promise<api.WorkloadDiagnosis> {
    const response = await this.runner.unary<api.DiagnoseWorkloadResponse>(
      (md, o, cb) => this.client.diagnoseWorkload({ workloadId, windowSeconds: options.windowSeconds ?? 0 }, md, o, cb),
      options,
    );
    if (!response.diagnosis) throw new PersysError("INTERNAL", "the server sent no diagnosis");
    return response.diagnosis;
  }

  /**
   * When cpu, memory and disk reservations (against allocatable) and usage (against capacity) run
   * out, per node and for the cluster (`nodeId` empty). A forecast without `secondsToExhaustion`
   * is not growing toward its limit. Rejects with NOT_FOUND for an unknown `nodeId`.
   */
  async forecast(options: ForecastOptions = {}): Promise<api.ResourceForecast[]> {
    const response = await this.runner.unary<api.GetForecastResponse>(
      (md, o, cb) =>
        this.client.getForecast(
          {
            nodeId: options.nodeId ?? "",
            windowSeconds: options.windowSeconds ?? 0,
            method: methods[options.method ?? "auto"],
          },
          md,
          o,
          cb,
        ),
      options,
    );
    return response.forecasts;
  }

  /** Right-sizing, rebalancing, flapping workloads and nodes at risk, each with evidence and expected effect. */
  async recommendations(options: WindowOptions = {}): Promise<api.Recommendation[]> {
    const response = await this.runner.unary<api.ListRecommendationsResponse>(
      (md, o, cb) => this.client.listRecommendations({ windowSeconds: options.windowSeconds ?? 0 }, md, o, cb),
      options,
    );
    return response.recommendations;
  }

  /**
   * Answers a question ("why is web pending?", "when does n1 run out of memory?") from the same
   * findings; `answer` is complete without a model, and `wordedBy` names the model when the server
   * has one configured to reword it. Rejects with INVALID_ARGUMENT for an empty question.
   */
  async ask(question: string, options: CallOptions = {}): Promise<api.AskResponse> {
    return this.runner.unary<api.AskResponse>((md, o, cb) => this.client.ask({ question }, md, o, cb), options);
  }
}
