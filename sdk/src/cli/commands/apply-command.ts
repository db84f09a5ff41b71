import { Command } from "commander";
import { api, MAX_APPLY_WORKLOADS, PersysError, readSpecFiles, type SpecDocument, WaitError } from "../../index.js";
import { type CliContext, outputFormat, parseDuration } from "../cli-context.js";
import { CliError, ExitCode } from "../exit-codes.js";
import { explainText, planText } from "../output/diagnosis-views.js";
import { WaitProgress } from "../progress/wait-progress.js";
import { type CliRun, collect, examples, handle, outputOption } from "./command-kit.js";

/** Reads the `-f` files (or stdin for `-`). */
export async function specDocuments(ctx: CliContext, files: readonly string[] | undefined): Promise<SpecDocument[]> {
  if (!files || files.length === 0)
    throw new CliError("give at least one spec file with -f (a file, a folder, or - for stdin)");
  return readSpecFiles(files, { stdin: ctx.io.stdin });
}

/**
 * Waits for workloads to reach `state`, showing replica progress, then prints the outcome of each.
 * Returns 0 when all got there, 2 when one timed out or failed (its reason and diagnosis printed).
 */
export async function waitForAll(
  ctx: CliContext,
  ids: readonly string[],
  target: "running" | "stopped" | "deleted",
  timeoutMs: number,
  progressStream: NodeJS.WritableStream & { isTTY?: boolean },
): Promise<number> {
  const progress = new WaitProgress(progressStream, ctx.c);
  const started = Date.now();
  const took: number[] = [];
  const client = ctx.client();
  const results = await Promise.allSettled(
    ids.map(async (id, i) => {
      try {
        return target === "deleted"
          ? await client.workloads.waitFor(id, "deleted", { timeoutMs })
          : await client.workloads.waitFor(id, target, { timeoutMs, onProgress: (w) => progress.update(w) });
      } finally {
        took[i] = Date.now() - started;
      }
    }),
  );
  progress.finish();
  let code: number = ExitCode.OK;
  results.forEach((result, i) => {
    const id = ids[i]!;
    if (result.status === "fulfilled") {
      const w = result.value;
      const ready = w ? ` (${w.status?.readyReplicas ?? 0}/${w.replicas ?? 1} ready)` : "";
      ctx.out(`workload/${id} ${ctx.c.green(target)}${ready} after ${((took[i] ?? 0) / 1000).toFixed(1)}s\n`);
      return;
    }
    const error = result.reason;
    if (!(error instanceof WaitError)) throw error;
    code = ExitCode.NOT_REACHED;
    ctx.out(`workload/${id} ${ctx.c.red(`not ${target}`)}: ${error.message}\n`);
    if (error.explanation) ctx.out(explainText(error.explanation, ctx.c));
  });
  return code;
}

/** A batch failure's `workloads[i].field` paths as `<file>#<document>: <id>.field`, which the user can find. */
function namingDocuments(error: unknown, docs: readonly SpecDocument[]): unknown {
  if (!(error instanceof PersysError) || error.details.length === 0) return error;
  const where = (path: string) =>
    path.replace(/^workloads\[(\d+)\]\.?/, (whole, i: string) => {
      const doc = docs[Number(i)];
      return doc ? `${doc.file}#${doc.document + 1} (${doc.workload.id})${whole.endsWith(".") ? " " : ""}` : whole;
    });
  const details = error.details.map((d) => ({ ...d, path: where(d.path) }));
  return new PersysError(error.code, details.map((d) => `${d.path}: ${d.reason}`).join("; "), {
    details,
    retryable: error.retryable,
    cause: error,
  });
}

interface ApplyOptions {
  file?: string[];
  wait?: boolean;
  waitTimeout: string;
  output?: string;
}

/** `persysctl apply -f FILE...`: create or update workloads from spec files, optionally waiting until they run. */
export function applyCommand(run: CliRun): Command {
  const command = new Command("apply")
    .description("create or update workloads from spec files (YAML or JSON, several documents per file)")
    .option("-f, --file <path>", "spec file, folder of spec files, or - for stdin (repeatable)", collect)
    .option("--wait", "wait until every applied workload runs, showing each replica's progress")
    .option("--wait-timeout <duration>", "how long --wait waits", "5m")
    .addOption(outputOption(["table", "json", "yaml"]));
  examples(command, [
    "persysctl apply -f web.yaml",
    "persysctl apply -f deploy/ --wait",
    "cat web.json | persysctl apply -f -",
    "persysctl apply -f web.yaml -o json",
  ]);
  return handle<ApplyOptions>(run, command, async (ctx, _args, options) => {
    const format = outputFormat(options.output, ["table", "json", "yaml"]);
    const docs = await specDocuments(ctx, options.file);
    const timeoutMs = parseDuration(options.waitTimeout, "--wait-timeout");
    const client = ctx.client();
    const applied: api.Workload[] = [];
    // One call for up to MAX_APPLY_WORKLOADS documents: the server checks them all before writing any.
    for (let from = 0; from < docs.length; from += MAX_APPLY_WORKLOADS) {
      const chunk = docs.slice(from, from + MAX_APPLY_WORKLOADS);
      const results =
        chunk.length === 1
          ? [await client.workloads.apply(chunk[0]!.workload)]
          : await client.workloads.applyMany(chunk.map((d) => d.workload)).catch((error: unknown) => {
              throw namingDocuments(error, chunk);
            });
      results.forEach((result, i) => {
        applied.push(result.workload);
        if (format === "table") {
          const verb = result.created ? "created" : result.changed ? "configured" : "unchanged";
          ctx.out(`workload/${chunk[i]!.workload.id} ${verb}\n`);
        }
      });
    }
    if (format !== "table")
      ctx.printObjects(
        applied.map((w) => api.Workload.toJSON(w)),
        format,
        false,
      );
    if (!options.wait) return ExitCode.OK;
    const ids = docs.map((d) => d.workload.id);
    const stopped = (w: api.Workload) => w.desiredState === api.DesiredState.DESIRED_STATE_STOPPED;
    const running = ids.filter((_, i) => !stopped(docs[i]!.workload));
    const stopping = ids.filter((_, i) => stopped(docs[i]!.workload));
    const stream = format === "table" ? ctx.io.stdout : ctx.io.stderr;
    const codes = [
      running.length ? await waitForAll(ctx, running, "running", timeoutMs, stream) : 0,
      stopping.length ? await waitForAll(ctx, stopping, "stopped", timeoutMs, stream) : 0,
    ];
    return Math.max(...codes);
  });
}

interface PlanOptions {
  file?: string[];
  output?: string;
}

/** `persysctl plan -f FILE`: the scheduler's dry run; exit 0 when every replica would be placed, 2 when not. */
export function planCommand(run: CliRun): Command {
  const command = new Command("plan")
    .description("dry run: show where each replica would go and why, without changing anything (exit 2: not placeable)")
    .option("-f, --file <path>", "spec file, folder of spec files, or - for stdin (repeatable)", collect)
    .addOption(outputOption(["table", "json", "yaml"]));
  examples(command, [
    "persysctl plan -f web.yaml",
    "persysctl plan -f big-vm.yaml || echo 'no node can run it'",
    "persysctl plan -f web.yaml -o json | jq .schedulable",
  ]);
  return handle<PlanOptions>(run, command, async (ctx, _args, options) => {
    const format = outputFormat(options.output, ["table", "json", "yaml"]);
    const docs = await specDocuments(ctx, options.file);
    const plans: api.PlanWorkloadResponse[] = [];
    for (const doc of docs) plans.push(await ctx.client().workloads.plan(doc.workload));
    if (format === "table") {
      plans.forEach((p, i) => {
        ctx.out(planText(docs[i]!.workload.id, p, ctx.c));
      });
    } else
      ctx.printObjects(
        plans.map((p) => api.PlanWorkloadResponse.toJSON(p)),
        format,
        plans.length === 1,
      );
    return plans.every((p) => p.schedulable) ? ExitCode.OK : ExitCode.NOT_REACHED;
  });
}
