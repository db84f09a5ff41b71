import { Command } from "commander";
import { api, PersysError } from "../../index.js";
import { outputFormat, parseDuration } from "../cli-context.js";
import { CliError, ExitCode } from "../exit-codes.js";
import { describeNode, describeWorkload } from "../output/describe-views.js";
import { explainText } from "../output/diagnosis-views.js";
import { specDocuments, waitForAll } from "./apply-command.js";
import { type CliRun, collect, examples, handle, outputOption, parseCount, resourceOf } from "./command-kit.js";

const RECENT_EVENTS = 20;

/** `persysctl describe workload|node NAME`. */
export function describeCommand(run: CliRun): Command {
  const command = new Command("describe")
    .description("show a workload (spec, replicas, placement diagnosis, recent events) or a node in detail")
    .argument("<resource>", "workload or node")
    .argument("<name>", "its id");
  examples(command, ["persysctl describe workload web", "persysctl describe node n1"]);
  return handle(run, command, async (ctx, [word, name]) => {
    const resource = resourceOf(word);
    const client = ctx.client();
    if (resource === "nodes") {
      ctx.out(describeNode(await client.nodes.get(name!), ctx.now(), ctx.c));
      return 0;
    }
    if (resource !== "workloads") throw new CliError(`cannot describe "${word}": use workload or node`);
    const workload = await client.workloads.get(name!, { view: "full" });
    const events = (await client.events.list({ workloadId: name }).toArray()).slice(-RECENT_EVENTS);
    ctx.out(describeWorkload(workload, events, ctx.now(), ctx.c));
    return 0;
  });
}

/** `persysctl explain NAME`: why each replica is where it is (or pending). */
export function explainCommand(run: CliRun): Command {
  const command = new Command("explain")
    .description(
      "show the scheduler's latest decision for every replica of a workload: nodes filtered and why, scores, winner",
    )
    .argument("<name>", "workload id")
    .addOption(outputOption(["table", "json", "yaml"]));
  examples(command, ["persysctl explain web", "persysctl explain web -o json | jq '.replicas[].diagnosis.message'"]);
  return handle<{ output?: string }>(run, command, async (ctx, [name], o) => {
    const format = outputFormat(o.output, ["table", "json", "yaml"]);
    const explanation = await ctx.client().workloads.explain(name!);
    if (format === "table") ctx.out(explainText(explanation, ctx.c));
    else ctx.printObjects([api.ExplainWorkloadResponse.toJSON(explanation)], format, true);
    return 0;
  });
}

interface DeleteOptions {
  file?: string[];
  ignoreNotFound?: boolean;
  wait?: boolean;
  waitTimeout: string;
}

/** `persysctl delete [workload] NAME...` or `delete -f FILE`. */
export function deleteCommand(run: CliRun): Command {
  const command = new Command("delete")
    .description("delete workloads by name or by spec file; replicas are stopped and removed")
    .argument("[names...]", "workload ids (an optional leading 'workload' is accepted)")
    .option("-f, --file <path>", "delete the workloads defined in these spec files (repeatable)", collect)
    .option("--ignore-not-found", "succeed for workloads that do not exist")
    .option("--wait", "wait until the workloads are gone")
    .option("--wait-timeout <duration>", "how long --wait waits", "5m");
  examples(command, [
    "persysctl delete web",
    "persysctl delete workload web api",
    "persysctl delete -f web.yaml --wait",
    "persysctl delete old --ignore-not-found",
  ]);
  return handle<DeleteOptions>(run, command, async (ctx, args, o) => {
    const names = resourceOf(args[0]) === "workloads" ? args.slice(1) : args;
    if (resourceOf(args[0]) === "nodes") throw new CliError("nodes cannot be deleted; use persysctl node drain");
    const ids = [...names, ...(o.file ? (await specDocuments(ctx, o.file)).map((d) => d.workload.id) : [])];
    if (ids.length === 0) throw new CliError("name at least one workload, or give -f");
    const client = ctx.client();
    const deleted: string[] = [];
    for (const id of ids) {
      const gone = await client.workloads.delete(id, { allowMissing: o.ignoreNotFound ?? false });
      if (gone) deleted.push(id);
      ctx.out(`workload/${id} ${gone ? "deleted" : "not found"}\n`);
    }
    if (!o.wait || deleted.length === 0) return 0;
    return waitForAll(ctx, deleted, "deleted", parseDuration(o.waitTimeout, "--wait-timeout"), ctx.io.stdout);
  });
}

interface LifecycleOptions {
  replica?: number;
  reboot?: boolean;
  wait?: boolean;
  waitTimeout: string;
}

interface MoveOptions {
  from?: string;
  to?: string;
  reason?: string;
}

/** `persysctl move NAME/INDEX [--from n1] [--to n2] [--reason why]`. */
export function moveCommand(run: CliRun): Command {
  const command = new Command("move")
    .description("move one replica off its node; the scheduler places it elsewhere, then the old copy stops")
    .argument("<replica>", "workload id and replica index, as web/1")
    .option("--from <node>", "only while the replica is on this node (safe to repeat)")
    .option("--to <node>", "place it on this node only")
    .option("--reason <text>", "why, recorded in the event and the new placement's diagnosis");
  examples(command, ["persysctl move web/1", "persysctl move web/0 --from n1 --to n3 --reason rebalance"]);
  return handle<MoveOptions>(run, command, async (ctx, args, o) => {
    const match = /^([^/]+)\/(\d+)$/.exec(args[0] ?? "");
    if (!match) throw new CliError(`replica must be NAME/INDEX (e.g. web/1), not ${JSON.stringify(args[0])}`);
    const [, id, index] = match as unknown as [string, string, string];
    const result = await ctx.client().workloads.move(id, Number(index), {
      ...(o.from ? { fromNode: o.from } : {}),
      ...(o.to ? { toNode: o.to } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
    });
    if (!result.moved) ctx.out(`replica ${id}/${index} unchanged (not on ${result.fromNode}, or already moving)\n`);
    else ctx.out(`replica ${id}/${index} moving off ${result.fromNode}: ${result.diagnosis?.message ?? ""}\n`);
    return 0;
  });
}

/** `persysctl start|stop|restart|retry NAME`. */
export function lifecycleCommands(run: CliRun): Command[] {
  const verbs = [
    { name: "start", text: "set the desired state to running (no-op when running)", target: "running" as const },
    { name: "stop", text: "set the desired state to stopped; replicas keep their nodes", target: "stopped" as const },
    { name: "restart", text: "restart replicas in place, honouring the update strategy", target: "running" as const },
    {
      name: "retry",
      text: "retry failed or pending replicas now instead of after their backoff",
      target: "running" as const,
    },
  ];
  return verbs.map(({ name, text, target }) => {
    const command = new Command(name)
      .description(text)
      .argument("<names...>", "workload ids")
      .option("--wait", `wait until the workloads are ${target}`)
      .option("--wait-timeout <duration>", "how long --wait waits", "5m");
    if (name === "restart" || name === "retry") {
      command.option("--replica <index>", "one replica only", parseCount("--replica"));
    }
    if (name === "restart") {
      command.option(
        "--reboot",
        "reboot in place instead of recreating: a VM's guest (ACPI, reset when ignored), a container (docker restart)",
      );
    }
    examples(
      command,
      name === "restart"
        ? ["persysctl restart web", "persysctl restart web api --wait", "persysctl restart db --reboot --replica 0"]
        : [`persysctl ${name} web`, `persysctl ${name} web api --wait`],
    );
    return handle<LifecycleOptions>(run, command, async (ctx, ids, o) => {
      const workloads = ctx.client().workloads;
      for (const id of ids) {
        const replica = o.replica === undefined ? {} : { replicaIndex: o.replica };
        if (name === "start") await workloads.start(id);
        else if (name === "stop") await workloads.stop(id);
        else if (name === "restart") await workloads.restart(id, { ...replica, ...(o.reboot ? { reboot: true } : {}) });
        else {
          const result = await workloads.retry(id, replica);
          const which = result.retriedReplicas.length
            ? ` (replicas ${result.retriedReplicas.join(", ")})`
            : " (nothing to retry)";
          ctx.out(`workload/${id} retried${which}\n`);
          continue;
        }
        const doing =
          name === "stop" ? "stopping" : name === "start" ? "starting" : o.reboot ? "rebooting" : "restarting";
        ctx.out(`workload/${id} ${doing}\n`);
      }
      if (!o.wait) return 0;
      return waitForAll(ctx, ids, target, parseDuration(o.waitTimeout, "--wait-timeout"), ctx.io.stdout);
    });
  });
}

interface LogsOptions {
  follow?: boolean;
  replica?: number;
  tail?: number;
  since?: string;
  service?: string;
  timestamps?: boolean;
}

/** `persysctl logs NAME [-f]`. */
export function logsCommand(run: CliRun): Command {
  const command = new Command("logs")
    .description("print a workload's logs (container output, VM serial console)")
    .argument("<name>", "workload id")
    .option("-f, --follow", "keep printing new lines")
    .option("--replica <index>", "one replica only (default: all, prefixed)", parseCount("--replica"))
    .option("--tail <lines>", "start with the last N lines of each replica", parseCount("--tail"))
    .option("--since <duration>", "only lines of the last DURATION, e.g. 10m")
    .option("--service <name>", "compose: one service only")
    .option("--timestamps", "prefix each line with its time");
  examples(command, [
    "persysctl logs web",
    "persysctl logs web -f --tail 20",
    "persysctl logs db --replica 0 --since 1h",
  ]);
  return handle<LogsOptions>(run, command, async (ctx, [name], o) => {
    const since = o.since ? new Date(ctx.now().getTime() - parseDuration(o.since, "--since")) : undefined;
    const lines = ctx.client().workloads.logs(name!, {
      follow: o.follow ?? false,
      ...(o.replica === undefined ? {} : { replicaIndex: o.replica }),
      ...(o.tail === undefined ? {} : { tailLines: o.tail }),
      ...(since ? { since } : {}),
      ...(o.service ? { service: o.service } : {}),
    });
    try {
      for await (const line of lines) {
        const prefix =
          o.replica === undefined
            ? ctx.c.dim(`[${name}-${line.replicaIndex}${line.service ? `/${line.service}` : ""}] `)
            : "";
        const time = o.timestamps && line.time ? `${line.time.toISOString()} ` : "";
        ctx.out(`${prefix}${time}${line.line}\n`);
      }
    } catch (error) {
      if (error instanceof PersysError && error.code === "UNAVAILABLE" && /not available/.test(error.message)) {
        throw new CliError(`logs: ${error.message}`, ExitCode.ERROR);
      }
      throw error;
    }
    return 0;
  });
}
