import { readFileSync } from "node:fs";
import { Command } from "commander";
import { parseAllDocuments } from "yaml";
import { api, policyFromDocument } from "../../index.js";
import { outputFormat } from "../cli-context.js";
import { CliError } from "../exit-codes.js";
import { renderTable } from "../output/table.js";
import { type CliRun, examples, handle, outputOption, parseCount } from "./command-kit.js";

const formats = ["table", "json", "yaml"] as const;
const outcome = (o: api.AuditOutcome) => api.auditOutcomeToJSON(o).replace("AUDIT_OUTCOME_", "").toLowerCase();

function triggerText(p: api.Policy): string {
  const t = p.when?.trigger;
  switch (t?.$case) {
    case "metric":
      return `${api.policyMetricToJSON(t.value.metric).replace("POLICY_METRIC_", "").toLowerCase()} of ${t.value.workloadId || t.value.nodeId} ${t.value.below ? "<" : ">"} ${t.value.threshold}`;
    case "cron":
      return `cron ${t.value}`;
    case "finding":
      return `finding ${api.recommendationKindToJSON(t.value.kind).replace("RECOMMENDATION_KIND_", "").toLowerCase()}`;
    case "event":
      return `event ${t.value.type}`;
    default:
      return "-";
  }
}

/** `persysctl policy apply|list|delete|audit|approve`. */
export function policyCommand(run: CliRun): Command {
  const policy = new Command("policy").description("automation policies: apply, list, delete, audit trail, approvals");
  examples(policy, ["persysctl policy apply -f web-autoscale.yaml", "persysctl policy audit --awaiting"]);

  const apply = new Command("apply")
    .description("create or replace policies from YAML or JSON files (idempotent)")
    .requiredOption("-f, --filename <file...>", "policy files");
  examples(apply, ["persysctl policy apply -f web-autoscale.yaml"]);
  handle<{ filename: string[] }>(run, apply, async (ctx, _args, o) => {
    for (const file of o.filename) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (error) {
        throw new CliError(`${file}: ${(error as Error).message}`);
      }
      for (const doc of parseAllDocuments(text)) {
        if (doc.errors.length > 0) throw new CliError(`${file}: ${doc.errors[0]!.message}`);
        const result = await ctx.client().automation.apply(policyFromDocument(doc.toJS()));
        ctx.out(`policy/${result.policy?.id} ${result.created ? "created" : "configured"}\n`);
      }
    }
    return 0;
  });

  const list = new Command("list").description("every policy").addOption(outputOption([...formats]));
  examples(list, ["persysctl policy list", "persysctl policy list -o yaml"]);
  handle<{ output?: string }>(run, list, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const policies = await ctx.client().automation.list();
    if (format !== "table")
      ctx.printObjects(
        policies.map((p) => api.Policy.toJSON(p)),
        format,
        false,
      );
    else
      ctx.out(
        renderTable(
          ["ID", "WHEN", "THEN", "COOLDOWN", "DRY-RUN", "APPROVAL"],
          policies.map((p) => [
            p.id,
            triggerText(p),
            p.action?.kind?.$case ?? "-",
            `${p.cooldownSeconds || 300}s`,
            String(p.dryRun),
            p.approval === api.PolicyApproval.POLICY_APPROVAL_MANUAL ? "manual" : "auto",
          ]),
        ),
      );
    return 0;
  });

  const del = new Command("delete").description("delete a policy").argument("<id>", "policy id");
  examples(del, ["persysctl policy delete web-autoscale"]);
  handle(run, del, async (ctx, [id]) => {
    await ctx.client().automation.delete(id!);
    ctx.out(`policy/${id} deleted\n`);
    return 0;
  });

  const audit = new Command("audit")
    .description("the audit trail, newest first")
    .argument("[id]", "one policy")
    .option("--awaiting", "only actions awaiting approval")
    .option("--limit <n>", "at most this many (default 100)")
    .addOption(outputOption([...formats]));
  examples(audit, ["persysctl policy audit web-autoscale", "persysctl policy audit --awaiting"]);
  handle<{ awaiting?: boolean; limit?: string; output?: string }>(run, audit, async (ctx, [id], o) => {
    const format = outputFormat(o.output, formats);
    const records = await ctx.client().automation.audit({
      policyId: id,
      awaitingApproval: o.awaiting ?? false,
      limit: o.limit ? parseCount("--limit")(o.limit) : 0,
    });
    if (format !== "table")
      ctx.printObjects(
        records.map((r) => api.AuditRecord.toJSON(r)),
        format,
        false,
      );
    else
      ctx.out(
        renderTable(
          ["TIME", "POLICY", "OUTCOME", "ACTION", "OBSERVED", "APPROVAL"],
          records.map((r) => [
            r.time?.toISOString() ?? "",
            r.policyId,
            outcome(r.outcome),
            r.action,
            r.observed,
            r.approvalId,
          ]),
        ),
      );
    return 0;
  });

  const approve = new Command("approve")
    .description("run an action awaiting approval (or --reject it)")
    .argument("<approval>", "approval id from `policy audit --awaiting`")
    .option("--reject", "reject instead");
  examples(approve, [
    "persysctl policy approve cordon-hot-1764624512000",
    "persysctl policy approve cordon-hot-1764624512000 --reject",
  ]);
  handle<{ reject?: boolean }>(run, approve, async (ctx, [id], o) => {
    const record = await ctx.client().automation.approve(id!, { reject: o.reject ?? false });
    ctx.out(`${outcome(record.outcome)}: ${record.action} — ${record.message}\n`);
    return record.outcome === api.AuditOutcome.AUDIT_OUTCOME_FAILED ? 1 : 0;
  });

  for (const sub of [apply, list, del, audit, approve]) policy.addCommand(sub);
  return policy;
}
