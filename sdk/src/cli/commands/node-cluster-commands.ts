import { Command } from "commander";
import { api } from "../../index.js";
import { type CliContext, outputFormat } from "../cli-context.js";
import { clusterStatusText } from "../output/describe-views.js";
import { nodeHeaders, nodeRow } from "../output/object-views.js";
import { renderTable } from "../output/table.js";
import { type CliRun, examples, handle, outputOption } from "./command-kit.js";
import { printContexts } from "./config-command.js";

/** Prints a node list or one node (the Go persysctl's `node list|get`). */
async function printNodes(ctx: CliContext, ids: string[], state: string | undefined, output: string | undefined) {
  const format = outputFormat(output, ["table", "wide", "json", "yaml"]);
  const client = ctx.client();
  const nodes =
    ids.length > 0
      ? await Promise.all(ids.map((id) => client.nodes.get(id)))
      : await client.nodes.list(state ? { state: state as "ready" } : {}).toArray();
  if (format === "json" || format === "yaml") {
    ctx.printObjects(
      nodes.map((n) => api.Node.toJSON(n)),
      format,
      ids.length === 1,
    );
    return;
  }
  if (nodes.length === 0) {
    ctx.err("No nodes found.");
    return;
  }
  const wide = format === "wide";
  ctx.out(
    renderTable(
      nodeHeaders(wide),
      nodes.map((n) => nodeRow(n, wide, ctx.now(), ctx.c)),
    ),
  );
}

/** `persysctl node cordon|uncordon|drain NAME` (and the Go `node list|get`). */
export function nodeCommand(run: CliRun): Command {
  const node = new Command("node").description("take nodes out of service and back (cordon, drain, uncordon)");
  const cordon = new Command("cordon")
    .description("stop placing new replicas on the node; running ones stay (idempotent)")
    .argument("<names...>", "node ids")
    .option("--reason <text>", "why, shown on the node and in events");
  examples(cordon, ["persysctl node cordon n1 --reason 'disk replacement'"]);
  handle<{ reason?: string }>(run, cordon, async (ctx, ids, o) => {
    for (const id of ids) {
      await ctx.client().nodes.cordon(id, o.reason ? { reason: o.reason } : {});
      ctx.out(`node/${id} cordoned\n`);
    }
    return 0;
  });
  const uncordon = new Command("uncordon")
    .description("allow placements on the node again and end a drain (idempotent)")
    .argument("<names...>", "node ids");
  examples(uncordon, ["persysctl node uncordon n1"]);
  handle(run, uncordon, async (ctx, ids) => {
    for (const id of ids) {
      await ctx.client().nodes.uncordon(id);
      ctx.out(`node/${id} uncordoned\n`);
    }
    return 0;
  });
  const drain = new Command("drain")
    .description("cordon the node and move its replicas elsewhere, one workload update at a time")
    .argument("<name>", "node id")
    .option("--reason <text>", "why, shown on the node and in events")
    .option("--dry-run", "only list the replicas that would move");
  examples(drain, ["persysctl node drain n1 --dry-run", "persysctl node drain n1 --reason 'kernel upgrade'"]);
  handle<{ reason?: string; dryRun?: boolean }>(run, drain, async (ctx, [id], o) => {
    const result = await ctx.client().nodes.drain(id!, { reason: o.reason ?? "", dryRun: o.dryRun ?? false });
    const verb = o.dryRun ? "would move" : "moving";
    if (result.evicted.length === 0)
      ctx.out(`node/${id} ${o.dryRun ? "has nothing to move" : "drained (nothing to move)"}\n`);
    else {
      ctx.out(
        `node/${id} ${o.dryRun ? "would be drained" : "draining"}; ${verb} ${result.evicted.length} replica(s):\n`,
      );
      for (const r of result.evicted) ctx.out(`  ${r.workloadId}[${r.replicaIndex}]\n`);
    }
    return 0;
  });
  const list = new Command("list")
    .description("list nodes (alias of 'get nodes', as in the Go persysctl)")
    .option("--status <state>", "ready, not-ready or lost")
    .addOption(outputOption(["table", "wide", "json", "yaml"]));
  examples(list, ["persysctl node list", "persysctl node list --status ready -o wide"]);
  handle<{ status?: string; output?: string }>(run, list, async (ctx, _args, o) => {
    await printNodes(ctx, [], o.status, o.output);
    return 0;
  });
  const get = new Command("get")
    .description("show a node (alias of 'get nodes NAME', as in the Go persysctl)")
    .argument("[name]", "node id")
    .option("--id <id>", "node id (Go persysctl flag)")
    .addOption(outputOption(["table", "wide", "json", "yaml"]));
  examples(get, ["persysctl node get --id n1", "persysctl node get n1 -o json"]);
  handle<{ id?: string; output?: string }>(run, get, async (ctx, [name], o) => {
    const id = o.id ?? name;
    await printNodes(ctx, id ? [id] : [], undefined, o.output ?? (id ? "yaml" : undefined));
    return 0;
  });
  for (const sub of [cordon, uncordon, drain, list, get]) node.addCommand(sub);
  examples(node, ["persysctl node cordon n1", "persysctl node drain n1 --dry-run", "persysctl node uncordon n1"]);
  return node;
}

async function clusterStatus(ctx: CliContext, output: string | undefined): Promise<number> {
  const format = outputFormat(output, ["table", "json", "yaml"]);
  const summary = await ctx.client().cluster.summary();
  if (format === "table") ctx.out(clusterStatusText(summary, ctx.discovery().endpoint));
  else ctx.printObjects([api.ClusterSummary.toJSON(summary)], format, true);
  return 0;
}

/** `persysctl cluster status` (and the Go `cluster list|get`). */
export function clusterCommand(run: CliRun): Command {
  const cluster = new Command("cluster").description("the cluster as a whole");
  const status = new Command("status")
    .description("nodes, workloads and replicas by state, capacity, leader and version")
    .addOption(outputOption(["table", "json", "yaml"]));
  examples(status, ["persysctl cluster status", "persysctl cluster status -o json | jq .nodesReady"]);
  handle<{ output?: string }>(run, status, (ctx, _args, o) => clusterStatus(ctx, o.output));
  const list = new Command("list").description("list the clusters (contexts) this CLI knows (Go persysctl alias)");
  examples(list, ["persysctl cluster list"]);
  handle(run, list, (ctx) => printContexts(ctx));
  const get = new Command("get")
    .description("show the current cluster's status (Go persysctl alias of 'cluster status')")
    .option("--id <id>", "context name (Go persysctl flag)")
    .addOption(outputOption(["table", "json", "yaml"]));
  examples(get, ["persysctl cluster get", "persysctl --context prod cluster get -o yaml"]);
  handle<{ id?: string; output?: string }>(run, get, (ctx, _args, o) => clusterStatus(ctx, o.output));
  for (const sub of [status, list, get]) cluster.addCommand(sub);
  examples(cluster, ["persysctl cluster status", "persysctl cluster list"]);
  return cluster;
}

/** `persysctl metrics`: the Go persysctl's cluster summary. */
export function metricsCommand(run: CliRun): Command {
  const command = new Command("metrics")
    .description("cluster summary (Go persysctl alias of 'cluster status')")
    .addOption(outputOption(["table", "json", "yaml"]));
  examples(command, ["persysctl metrics", "persysctl metrics -o json"]);
  return handle<{ output?: string }>(run, command, (ctx, _args, o) => clusterStatus(ctx, o.output));
}
