import { Command } from "commander";
import { api, type ForecastMethodName } from "../../index.js";
import { type CliContext, outputFormat } from "../cli-context.js";
import { renderTable } from "../output/table.js";
import { type CliRun, examples, handle, outputOption, parseCount } from "./command-kit.js";

const formats = ["table", "json", "yaml"] as const;

const evidenceKind = (k: api.EvidenceKind) => api.evidenceKindToJSON(k).replace("EVIDENCE_KIND_", "").toLowerCase();
const dimension = (d: api.ResourceDimension) =>
  api.resourceDimensionToJSON(d).replace("RESOURCE_DIMENSION_", "").toLowerCase();

function print(ctx: CliContext, format: (typeof formats)[number], json: unknown, table: () => string): void {
  if (format === "json" || format === "yaml") ctx.printObjects([json], format, true);
  else ctx.out(table());
}

function diagnosisText(d: api.WorkloadDiagnosis): string {
  const lines = [`${d.summary}\n`];
  d.causes.forEach((c, i) => {
    lines.push(`\n${i + 1}. [${c.rule}] ${c.summary}\n`);
    for (const e of c.evidence) lines.push(`     ${evidenceKind(e.kind)} ${e.ref}: ${e.summary}\n`);
    if (c.remediation) lines.push(`     fix: ${c.remediation}\n`);
  });
  if (d.relatedEvents.length > 0) {
    lines.push("\nRelated events:\n");
    lines.push(
      `${renderTable(
        ["ID", "TYPE", "RELEVANCE", "MESSAGE"],
        d.relatedEvents.slice(0, 8).map((e) => [e.ref, e.type, e.relevance.toFixed(2), e.summary]),
      )}`,
    );
  }
  if (d.remediations.length > 0) {
    lines.push("\nRemediation:\n");
    for (const r of d.remediations) lines.push(`  ${api.errorCodeToJSON(r.code)}: ${r.text}\n`);
  }
  return lines.join("");
}

/** `persysctl diagnose`, `recommend`, `forecast` and `ask`: the intelligence reads. */
export function intelligenceCommands(run: CliRun): Command[] {
  const window = ["--window <seconds>", "seconds of history to read (default 3600)"] as const;

  const diagnose = new Command("diagnose")
    .description("why a workload is where it is: causes with cited events, diagnoses and node states")
    .argument("<name>", "workload id")
    .option(...window)
    .addOption(outputOption([...formats]));
  examples(diagnose, ["persysctl diagnose web", "persysctl diagnose web --window 600 -o json"]);
  handle<{ window?: string; output?: string }>(run, diagnose, async (ctx, [id], o) => {
    const format = outputFormat(o.output, formats);
    const windowSeconds = o.window ? parseCount("--window")(o.window) : 0;
    const d = await ctx.client().intelligence.diagnose(id!, { windowSeconds });
    print(ctx, format, api.WorkloadDiagnosis.toJSON(d), () => diagnosisText(d));
    return 0;
  });

  const recommend = new Command("recommend")
    .description("right-sizing, rebalancing, flapping workloads and nodes at risk")
    .option(...window)
    .addOption(outputOption([...formats]));
  examples(recommend, ["persysctl recommend", "persysctl recommend -o yaml"]);
  handle<{ window?: string; output?: string }>(run, recommend, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const windowSeconds = o.window ? parseCount("--window")(o.window) : 0;
    const list = await ctx.client().intelligence.recommendations({ windowSeconds });
    print(
      ctx,
      format,
      list.map((r) => api.Recommendation.toJSON(r)),
      () =>
        list.length === 0
          ? "Nothing to recommend.\n"
          : renderTable(
              ["KIND", "ID", "SUMMARY", "ACTION", "EFFECT"],
              list.map((r) => [
                api.recommendationKindToJSON(r.kind).replace("RECOMMENDATION_KIND_", "").toLowerCase(),
                r.id,
                r.summary,
                r.action,
                r.expectedEffect,
              ]),
            ),
    );
    return 0;
  });

  const forecast = new Command("forecast")
    .description("time until cpu, memory and disk reservations or usage run out, per node and for the cluster")
    .option("--node <id>", "one node only")
    .option("--method <method>", "auto, linear or holt (default auto)")
    .option(...window)
    .addOption(outputOption([...formats]));
  examples(forecast, ["persysctl forecast", "persysctl forecast --node n1 --method holt -o json"]);
  handle<{ node?: string; method?: string; window?: string; output?: string }>(run, forecast, async (ctx, _a, o) => {
    const format = outputFormat(o.output, formats);
    const windowSeconds = o.window ? parseCount("--window")(o.window) : 0;
    const method = (o.method ?? "auto") as ForecastMethodName;
    const list = await ctx.client().intelligence.forecast({ nodeId: o.node, method, windowSeconds });
    print(
      ctx,
      format,
      list.map((f) => api.ResourceForecast.toJSON(f)),
      () =>
        renderTable(
          ["NODE", "RESOURCE", "SIGNAL", "CURRENT", "LIMIT", "RUNS OUT IN", "METHOD", "R²", "POINTS"],
          list.map((f) => [
            f.nodeId || "(cluster)",
            dimension(f.dimension),
            api.forecastSignalToJSON(f.signal).replace("FORECAST_SIGNAL_", "").toLowerCase(),
            `${Math.round(f.current)} ${f.unit}`,
            `${f.limit} ${f.unit}`,
            f.secondsToExhaustion === undefined ? "never" : `${Math.round(f.secondsToExhaustion)} s`,
            api.forecastMethodToJSON(f.method).replace("FORECAST_METHOD_", "").toLowerCase(),
            f.rSquared.toFixed(2),
            String(f.points),
          ]),
        ),
    );
    return 0;
  });

  const ask = new Command("ask")
    .description("ask a question about the cluster; answered from diagnoses, forecasts and recommendations")
    .argument("<question...>", 'the question, e.g. "why is web pending?"')
    .addOption(outputOption([...formats]));
  examples(ask, ['persysctl ask "why is web pending?"', 'persysctl ask "when does n1 run out of memory?"']);
  handle<{ output?: string }>(run, ask, async (ctx, words, o) => {
    const format = outputFormat(o.output, formats);
    const response = await ctx.client().intelligence.ask(words.join(" "));
    print(ctx, format, api.AskResponse.toJSON(response), () => {
      const refs = response.evidence.slice(0, 10).map((e) => `  ${evidenceKind(e.kind)} ${e.ref}: ${e.summary}\n`);
      return `${response.answer}\n${refs.length ? `\nEvidence:\n${refs.join("")}` : ""}${response.wordedBy ? `\n(worded by ${response.wordedBy})\n` : ""}`;
    });
    return 0;
  });

  return [diagnose, recommend, forecast, ask];
}
