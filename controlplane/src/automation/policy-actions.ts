import { api, PersysError } from "@persys/schema";
import type { CallContext, PersysApi } from "../api/persys-api.js";
import { reservedShare } from "../intelligence/recommendations.js";
import { type AttemptReport, postWebhook, WEBHOOK_DEFAULTS } from "./webhook-delivery.js";

/** An action resolved for one firing: what it would do, and how to do it through the public API. */
export interface PlannedAction {
  /** e.g. "scale web 2 → 4", "cordon n3", "move web/1 off n1". */
  readonly description: string;
  /** Nothing would change (already at max replicas, already cordoned, nothing placed to move). */
  readonly noop: boolean;
  run(): Promise<string>;
}

/** What the trigger named, for actions that take their subject from it. */
export interface TriggerSubject {
  readonly nodeId?: string | undefined;
  readonly workloadId?: string | undefined;
  readonly replicaIndex?: number | undefined;
}

export interface PlanContext {
  readonly policyId: string;
  readonly webhookBody: () => unknown;
  /** Called after each failed webhook attempt that is retried (the engine audits it). */
  readonly onRetry?: (attempt: AttemptReport) => Promise<void>;
}

/**
 * Resolves a policy's `then` against the cluster now, through the public API only (the same calls
 * a user makes, so the scheduler places and explains every change).
 *
 * @throws PersysError when the action cannot be resolved (e.g. the workload is gone).
 */
export async function planAction(
  action: api.PolicyAction | undefined,
  subject: TriggerSubject,
  core: PersysApi,
  ctx: CallContext,
  context: PlanContext,
): Promise<PlannedAction> {
  const a = action?.kind;
  switch (a?.$case) {
    case "scale": {
      const s = a.value;
      const { workload } = await core.getWorkload(
        { workloadId: s.workloadId, view: api.WorkloadView.WORKLOAD_VIEW_BASIC },
        ctx,
      );
      if (!workload) throw new PersysError("NOT_FOUND", `workload ${s.workloadId} not found`);
      const current = workload.replicas ?? 0;
      const target = Math.min(s.maxReplicas, Math.max(s.minReplicas, current + (s.step || 1)));
      return {
        description: `scale ${s.workloadId} ${current} → ${target}`,
        noop: target === current,
        run: async () => {
          const { status: _status, ...input } = workload;
          const result = await core.applyWorkload(
            {
              workload: { ...input, replicas: target },
              ...(workload.status?.revision ? { expectedRevision: workload.status.revision } : {}),
            },
            ctx,
          );
          return `${s.workloadId} now has ${result.workload?.replicas ?? target} replicas`;
        },
      };
    }
    case "restart":
      return {
        description: `restart ${a.value.workloadId}`,
        noop: false,
        run: async () => {
          await core.restartWorkload(api.RestartWorkloadRequest.fromPartial({ workloadId: a.value.workloadId }), ctx);
          return `${a.value.workloadId} restarting`;
        },
      };
    case "cordon":
    case "drain": {
      const nodeId = a.value.nodeId || subject.nodeId || "";
      if (!nodeId) throw new PersysError("INVALID_ARGUMENT", `the trigger named no node to ${a.$case}`);
      const { node } = await core.getNode({ nodeId }, ctx);
      const done = a.$case === "cordon" ? node?.cordoned : node?.draining;
      const reason = `policy ${context.policyId}`;
      return {
        description: `${a.$case} ${nodeId}`,
        noop: done === true,
        run: async () => {
          if (a.$case === "cordon") await core.cordonNode({ nodeId, reason }, ctx);
          else await core.drainNode({ nodeId, reason, dryRun: false }, ctx);
          return `${nodeId} ${a.$case === "cordon" ? "cordoned" : "draining"}`;
        },
      };
    }
    case "move":
      return planMove(a.value, subject, core, ctx, context);
    case "webhook": {
      const w = a.value;
      return {
        description: `POST ${w.url}`,
        noop: false,
        run: () =>
          postWebhook(w.url, context.webhookBody(), {
            maxAttempts: w.maxAttempts || WEBHOOK_DEFAULTS.maxAttempts,
            timeoutMs: (w.timeoutSeconds || WEBHOOK_DEFAULTS.timeoutSeconds) * 1000,
            signal: ctx.signal,
            ...(context.onRetry ? { onRetry: context.onRetry } : {}),
          }),
      };
    }
    default:
      throw new PersysError("INVALID_ARGUMENT", "the policy has no action");
  }
}

/**
 * Picks the replica to move: the one a REBALANCE finding names, else the workload's replica on
 * the node the trigger names, else its replica on the most reserved node (the higher of cpu and
 * memory reservations over allocatable). The move itself is `MoveReplica` with `fromNode`, so it
 * is idempotent, and the scheduler chooses where the replica goes.
 */
async function planMove(
  m: api.MoveAction,
  subject: TriggerSubject,
  core: PersysApi,
  ctx: CallContext,
  context: PlanContext,
): Promise<PlannedAction> {
  const workloadId = m.workloadId || subject.workloadId || "";
  if (!workloadId) throw new PersysError("INVALID_ARGUMENT", "the trigger named no workload to move");
  const { workload } = await core.getWorkload({ workloadId, view: api.WorkloadView.WORKLOAD_VIEW_BASIC }, ctx);
  const placed = (workload?.status?.replicas ?? []).filter((r) => r.nodeId);
  let pick =
    (subject.workloadId ?? workloadId) === workloadId && subject.replicaIndex !== undefined
      ? placed.find((r) => r.index === subject.replicaIndex && (!subject.nodeId || r.nodeId === subject.nodeId))
      : undefined;
  pick ??= placed.find((r) => subject.nodeId && r.nodeId === subject.nodeId);
  if (!pick && placed.length > 0) {
    const { nodes } = await core.listNodes(api.ListNodesRequest.fromPartial({ pageSize: 1000 }), ctx);
    const share = new Map(nodes.map((n) => [n.id, reservedShare(n)]));
    pick = [...placed].sort((x, y) => (share.get(y.nodeId) ?? 0) - (share.get(x.nodeId) ?? 0) || x.index - y.index)[0];
  }
  if (!pick) return { description: `move a replica of ${workloadId}`, noop: true, run: async () => "" };
  const { index, nodeId: from } = pick;
  return {
    description: `move ${workloadId}/${index} off ${from}`,
    noop: false,
    run: async () => {
      const result = await core.moveReplica(
        { workloadId, replicaIndex: index, fromNode: from, toNode: "", reason: `policy ${context.policyId}` },
        ctx,
      );
      return result.moved
        ? `${workloadId}/${index} moving off ${from}: ${result.diagnosis?.message ?? ""}`
        : `${workloadId}/${index} was already moving or moved off ${from}`;
    },
  };
}
