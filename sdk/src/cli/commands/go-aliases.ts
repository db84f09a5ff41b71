import { readFileSync } from "node:fs";
import { Command } from "commander";
import { type api, compose, container, type PortInput, readSpecFiles } from "../../index.js";
import type { CliContext } from "../cli-context.js";
import { CliError } from "../exit-codes.js";
import { waitForAll } from "./apply-command.js";
import { type CliRun, collect, examples, handle, outputOption } from "./command-kit.js";
import { printWorkloads } from "./get-command.js";

/** `8080:80`, `80`, `5353:53/udp` → a port. */
export function parsePortFlag(text: string): PortInput {
  const match = /^(?:(\d+):)?(\d+)(?:\/(tcp|udp))?$/.exec(text.trim());
  if (!match) throw new CliError(`--ports ${text}: use CONTAINER, HOST:CONTAINER or HOST:CONTAINER/udp`);
  return {
    container: Number(match[2]),
    ...(match[1] ? { host: Number(match[1]) } : {}),
    ...(match[3] ? { protocol: match[3] as "tcp" | "udp" } : {}),
  };
}

/** `a=1,b=2` → `{a: "1", b: "2"}`. */
export function parseEnvFlag(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of text.split(",").filter(Boolean)) {
    const at = item.indexOf("=");
    if (at <= 0) throw new CliError(`--env ${item}: use NAME=value`);
    env[item.slice(0, at)] = item.slice(at + 1);
  }
  return env;
}

interface ScheduleOptions {
  specFile?: string;
  id?: string;
  name?: string;
  type?: string;
  image?: string;
  command?: string;
  compose?: string;
  gitRepo?: string;
  gitBranch?: string;
  env?: string;
  ports?: string[];
  replicas?: string;
  restartPolicy?: string;
  desiredState?: string;
  wait?: boolean;
}

/** The workload the Go `workload schedule` flags describe. */
function scheduledWorkload(o: ScheduleOptions): api.Workload {
  const id = o.id ?? o.name;
  if (!id) throw new CliError("workload schedule: give --id (or a spec file)");
  const type = (o.type ?? (o.compose || o.gitRepo ? "compose" : "container")).toLowerCase();
  const common = {
    id,
    ...(o.replicas ? { replicas: Number(o.replicas) } : {}),
    ...(o.desiredState ? { desiredState: o.desiredState.toLowerCase() as "running" } : {}),
  };
  if (["container", "docker-container", "docker"].includes(type)) {
    if (!o.image) throw new CliError("workload schedule --type container: give --image");
    return container({
      ...common,
      image: o.image,
      ...(o.command ? { command: ["sh", "-c", o.command] } : {}),
      ...(o.env ? { env: parseEnvFlag(o.env) } : {}),
      ports: (o.ports ?? []).map(parsePortFlag),
      ...(o.restartPolicy ? { restart: o.restartPolicy.toLowerCase() as "no" } : {}),
    });
  }
  if (["compose", "docker-compose", "git-compose"].includes(type)) {
    return compose({
      ...common,
      ...(o.compose ? { inlineYaml: readFileSync(o.compose, "utf8") } : {}),
      ...(o.gitRepo ? { git: { repo: o.gitRepo, ...(o.gitBranch ? { ref: o.gitBranch } : {}) } } : {}),
      ...(o.env ? { env: parseEnvFlag(o.env) } : {}),
    });
  }
  throw new CliError(`workload schedule --type ${o.type}: use container or compose, or a spec file for VMs`);
}

/** Resolves the id of a Go-style `--id X` or a positional name. */
function idOf(name: string | undefined, o: { id?: string }): string {
  const id = o.id ?? name;
  if (!id) throw new CliError("give the workload id (--id ID or as an argument)");
  return id;
}

/** `persysctl workload ...`: the Go persysctl's workload commands, mapped onto the new verbs. */
export function workloadAliases(run: CliRun): Command {
  const group = new Command("workload").description(
    "Go persysctl compatible workload commands (schedule, list, get, delete, retry, start, stop, restart)",
  );
  const schedule = new Command("schedule")
    .description("apply a workload from a spec file or from flags (alias of 'apply')")
    .argument("[file]", "spec file (same as --spec-file)")
    .option("--spec-file <path>", "spec file (YAML or JSON)")
    .option("--id <id>", "workload id")
    .option("--name <name>", "workload id, when --id is not given")
    .option("--type <type>", "container (docker-container) or compose (docker-compose, git-compose)")
    .option("--image <image>", "container image")
    .option("--command <command>", "container command, run with sh -c")
    .option("--compose <file>", "compose file")
    .option("--git-repo <url>", "compose from git")
    .option("--git-branch <ref>", "git ref")
    .option("--env <k=v,...>", "environment variables")
    .option("--ports <port>", "HOST:CONTAINER[/udp] (repeatable)", collect)
    .option("--replicas <n>", "replicas")
    .option("--restart-policy <policy>", "no, always, on-failure, unless-stopped")
    .option("--desired-state <state>", "running or stopped")
    .option("--wait", "wait until it runs");
  examples(schedule, [
    "persysctl workload schedule web.yaml",
    "persysctl workload schedule --id web --image nginx:1.27 --ports 8080:80",
  ]);
  handle<ScheduleOptions>(run, schedule, async (ctx, [file], o) => {
    const path = o.specFile ?? file;
    const workloads = path
      ? (await readSpecFiles([path], { stdin: ctx.io.stdin })).map((d) => d.workload)
      : [scheduledWorkload(o)];
    for (const w of workloads) {
      const result = await ctx.client().workloads.apply(w);
      ctx.out(`workload/${w.id} ${result.created ? "created" : result.changed ? "configured" : "unchanged"}\n`);
    }
    return o.wait
      ? waitForAll(
          ctx,
          workloads.map((w) => w.id),
          "running",
          300_000,
          ctx.io.stdout,
        )
      : 0;
  });
  const list = new Command("list")
    .description("list workloads (alias of 'get workloads')")
    .option("--status <state>", "only workloads in this state")
    .option("--node-id <node>", "only workloads with a replica on this node")
    .addOption(outputOption(["table", "wide", "json", "yaml", "name"]));
  examples(list, ["persysctl workload list", "persysctl workload list --status running --node-id n1"]);
  handle<{ status?: string; nodeId?: string; output?: string }>(run, list, async (ctx, _args, o) => {
    const all = await ctx
      .client()
      .workloads.list({
        ...(o.status ? { state: o.status.toLowerCase() as "running" } : {}),
        ...(o.nodeId ? { nodeId: o.nodeId } : {}),
      })
      .toArray();
    printWorkloads(ctx, all, (o.output ?? "table") as "table", false);
    return 0;
  });
  group.addCommand(list);
  const single = (name: string, text: string, act: (ctx: CliContext, id: string) => Promise<string>) => {
    const command = new Command(name)
      .description(text)
      .argument("[name]", "workload id")
      .option("--id <id>", "workload id (Go persysctl flag)");
    examples(command, [`persysctl workload ${name} --id web`, `persysctl workload ${name} web`]);
    handle<{ id?: string }>(run, command, async (ctx, [name], o) => {
      ctx.out(await act(ctx, idOf(name, o)));
      return 0;
    });
    group.addCommand(command);
  };
  single("get", "show a workload as YAML (alias of 'get workload NAME -o yaml')", async (ctx, id) => {
    printWorkloads(ctx, [await ctx.client().workloads.get(id)], "yaml", true);
    return "";
  });
  single("delete", "delete a workload (alias of 'delete')", async (ctx, id) => {
    await ctx.client().workloads.delete(id);
    return `workload/${id} deleted\n`;
  });
  single("retry", "retry failed replicas now (alias of 'retry')", async (ctx, id) => {
    const r = await ctx.client().workloads.retry(id);
    return `workload/${id} retried (replicas ${r.retriedReplicas.join(", ") || "none"})\n`;
  });
  single("start", "start a workload (alias of 'start')", async (ctx, id) => {
    await ctx.client().workloads.start(id);
    return `workload/${id} starting\n`;
  });
  single("stop", "stop a workload (alias of 'stop')", async (ctx, id) => {
    await ctx.client().workloads.stop(id);
    return `workload/${id} stopping\n`;
  });
  single("restart", "restart a workload (alias of 'restart')", async (ctx, id) => {
    await ctx.client().workloads.restart(id);
    return `workload/${id} restarting\n`;
  });
  group.addCommand(schedule, { isDefault: false });
  examples(group, ["persysctl workload list", "persysctl workload get --id web", "persysctl workload retry --id web"]);
  return group;
}
