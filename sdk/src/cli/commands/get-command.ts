import { Command } from "commander";
import { api } from "../../index.js";
import { type CliContext, type OutputFormat, outputFormat, parseDuration } from "../cli-context.js";
import { CliError } from "../exit-codes.js";
import { eventHeaders, eventRow, nodeHeaders, nodeRow, workloadHeaders, workloadRow } from "../output/object-views.js";
import { renderRows, renderTable } from "../output/table.js";
import { type CliRun, collect, examples, handle, outputOption, resourceOf } from "./command-kit.js";

interface GetOptions {
  output?: string;
  selector?: string;
  kind?: string;
  state?: string;
  node?: string;
  capability?: string;
  watch?: boolean;
  workload?: string;
  type?: string[];
  severity?: string;
  since?: string;
}

const formats: OutputFormat[] = ["table", "wide", "json", "yaml", "name"];

/** Prints workloads in the chosen format. */
export function printWorkloads(
  ctx: CliContext,
  workloads: readonly api.Workload[],
  format: OutputFormat,
  single: boolean,
): void {
  if (format === "json" || format === "yaml") {
    ctx.printObjects(
      workloads.map((w) => api.Workload.toJSON(w)),
      format,
      single,
    );
  } else if (format === "name") {
    ctx.out(workloads.map((w) => `${w.id}\n`).join(""));
  } else if (workloads.length === 0) {
    ctx.err("No workloads found.");
  } else {
    const wide = format === "wide";
    ctx.out(
      renderTable(
        workloadHeaders(wide),
        workloads.map((w) => workloadRow(w, wide, ctx.now(), ctx.c)),
      ),
    );
  }
}

async function getWorkloads(ctx: CliContext, names: string[], o: GetOptions, format: OutputFormat): Promise<void> {
  const client = ctx.client();
  const view = format === "json" || format === "yaml" ? "full" : "basic";
  if (names.length > 0 && !o.watch) {
    const found = await Promise.all(names.map((name) => client.workloads.get(name, { view })));
    printWorkloads(ctx, found, format, names.length === 1);
    return;
  }
  const list = client.workloads.list({
    ...(o.kind ? { kind: o.kind as "container" } : {}),
    ...(o.state ? { state: o.state as "running" } : {}),
    ...(o.node ? { nodeId: o.node } : {}),
    ...(o.selector ? { labelSelector: o.selector } : {}),
    view,
  });
  const all: api.Workload[] = [];
  let revision = 0;
  for await (const page of list.pages()) {
    if (revision === 0) revision = page.storeRevision;
    all.push(...page.items.filter((w) => names.length === 0 || names.includes(w.id)));
  }
  if (!o.watch) {
    printWorkloads(ctx, all, format, false);
    return;
  }
  if (format === "table" || format === "wide") {
    if (all.length > 0) printWorkloads(ctx, all, format, false);
  } else if (format !== "name") {
    for (const w of all) ctx.out(`${JSON.stringify({ type: "added", workload: api.Workload.toJSON(w) })}\n`);
  }
  const wide = format === "wide";
  let headerShown = all.length > 0;
  const watch = client.workloads.watch({
    ...(names.length === 1 ? { workloadId: names[0] } : {}),
    ...(o.kind ? { kind: o.kind as "container" } : {}),
    ...(o.selector ? { labelSelector: o.selector } : {}),
    afterStoreRevision: revision,
    view,
    onReconnect: (info) => ctx.err(`watch: connection lost (${info.error?.message ?? "stream ended"}); reconnecting`),
  });
  for await (const event of watch) {
    const w = event.workload;
    if (names.length > 1 && !names.includes(w.id)) continue;
    if (format === "json" || format === "yaml") {
      ctx.out(`${JSON.stringify({ type: event.type, workload: api.Workload.toJSON(w) })}\n`);
    } else if (format === "name") {
      ctx.out(`${event.type} ${w.id}\n`);
    } else {
      const row = workloadRow(w, wide, ctx.now(), ctx.c);
      if (event.type === "deleted") row[2] = ctx.c.dim("deleted");
      ctx.out(headerShown ? renderRows(workloadHeaders(wide), [row]) : renderTable(workloadHeaders(wide), [row]));
      headerShown = true;
    }
  }
}

async function getNodes(ctx: CliContext, names: string[], o: GetOptions, format: OutputFormat): Promise<void> {
  const client = ctx.client();
  const fetch = async () =>
    names.length > 0 && !o.state && !o.selector && !o.capability
      ? Promise.all(names.map((name) => client.nodes.get(name)))
      : (
          await client.nodes
            .list({
              ...(o.state ? { state: o.state as "ready" } : {}),
              ...(o.selector ? { labelSelector: o.selector } : {}),
              ...(o.capability ? { capability: o.capability } : {}),
            })
            .toArray()
        ).filter((n) => names.length === 0 || names.includes(n.id));
  const print = (nodes: api.Node[], header: boolean) => {
    if (format === "json" || format === "yaml")
      ctx.printObjects(
        nodes.map((n) => api.Node.toJSON(n)),
        format,
        names.length === 1,
      );
    else if (format === "name") ctx.out(nodes.map((n) => `${n.id}\n`).join(""));
    else if (nodes.length === 0 && header) ctx.err("No nodes found.");
    else {
      const wide = format === "wide";
      const rows = nodes.map((n) => nodeRow(n, wide, ctx.now(), ctx.c));
      ctx.out(header ? renderTable(nodeHeaders(wide), rows) : renderRows(nodeHeaders(wide), rows));
    }
  };
  let nodes = await fetch();
  print(nodes, true);
  if (!o.watch) return;
  // No node watch in the API: poll, printing the nodes whose state or allocation changed.
  const key = (n: api.Node) => JSON.stringify([n.state, n.cordoned, n.draining, n.allocated, n.replicaCount]);
  let last = new Map(nodes.map((n) => [n.id, key(n)]));
  for (;;) {
    await new Promise((r) => setTimeout(r, 2_000));
    nodes = await fetch();
    const changed = nodes.filter((n) => last.get(n.id) !== key(n));
    if (changed.length > 0) print(changed, false);
    last = new Map(nodes.map((n) => [n.id, key(n)]));
  }
}

async function getEvents(ctx: CliContext, names: string[], o: GetOptions, format: OutputFormat): Promise<void> {
  if (format === "name" || format === "wide") throw new CliError(`-o ${format} is not available for events`);
  const client = ctx.client();
  const filter = {
    ...(o.workload || names[0] ? { workloadId: o.workload ?? names[0] } : {}),
    ...(o.node ? { nodeId: o.node } : {}),
    ...(o.type ? { types: o.type } : {}),
    ...(o.severity ? { minSeverity: o.severity as "info" } : {}),
  };
  const since = o.since ? new Date(ctx.now().getTime() - parseDuration(o.since, "--since")) : undefined;
  const events = await client.events.list({ ...filter, ...(since ? { since } : {}) }).toArray();
  const print = (list: api.Event[], header: boolean) => {
    if (format === "json" || format === "yaml") {
      if (o.watch) for (const e of list) ctx.out(`${JSON.stringify(api.Event.toJSON(e))}\n`);
      else
        ctx.printObjects(
          list.map((e) => api.Event.toJSON(e)),
          format,
          false,
        );
    } else if (list.length === 0 && header && !o.watch) ctx.err("No events found.");
    else if (list.length > 0) {
      const rows = list.map((e) => eventRow(e, ctx.now(), ctx.c));
      ctx.out(header ? renderTable(eventHeaders, rows) : renderRows(eventHeaders, rows));
    }
  };
  print(events, true);
  if (!o.watch) return;
  let header = events.length === 0;
  const last = events[events.length - 1];
  const watch = client.events.watch({
    ...filter,
    ...(last ? { afterEventId: last.id } : {}),
    onReconnect: (info) => ctx.err(`watch: connection lost (${info.error?.message ?? "stream ended"}); reconnecting`),
  });
  for await (const event of watch) {
    print([event], header);
    header = false;
  }
}

/** `persysctl get workloads|nodes|events [NAME...]`. */
export function getCommand(run: CliRun): Command {
  const command = new Command("get")
    .description("list workloads, nodes or events (or show named ones)")
    .argument("<resource>", "workloads (wl), nodes (no) or events (ev)")
    .argument("[names...]", "only these (for events: the workload)")
    .addOption(outputOption(formats))
    .option("-l, --selector <selector>", "label selector, e.g. app=web,tier!=db")
    .option("-w, --watch", "after listing, keep printing changes")
    .option("--kind <kind>", "workloads: container, compose or vm")
    .option("--state <state>", "workloads: pending, running, failed, ...; nodes: ready, not-ready, lost")
    .option("--node <node>", "workloads with a replica on this node; events about this node")
    .option("--capability <name>", "nodes having this capability, e.g. kvm")
    .option("--workload <name>", "events: about this workload")
    .option("--type <type>", "events: of this type (repeatable), e.g. ReplicaPlaced", collect)
    .option("--severity <severity>", "events: at least info, warning or error")
    .option("--since <duration>", "events: recorded in the last DURATION, e.g. 10m");
  examples(command, [
    "persysctl get workloads",
    "persysctl get wl web -o yaml > web.yaml",
    "persysctl get workloads -l app=web -o wide --watch",
    "persysctl get nodes --state ready",
    "persysctl get events web --since 10m",
    "persysctl get events --severity warning -w",
  ]);
  return handle<GetOptions>(run, command, async (ctx, args, o) => {
    const [word, ...names] = args;
    const format = outputFormat(o.output, formats);
    const resource = resourceOf(word);
    if (!resource) throw new CliError(`unknown resource "${word}": use workloads, nodes or events`);
    if (resource === "workloads") await getWorkloads(ctx, names, o, format);
    else if (resource === "nodes") await getNodes(ctx, names, o, format);
    else await getEvents(ctx, names, o, format);
    return 0;
  });
}
