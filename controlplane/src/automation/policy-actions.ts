import { api, PersysError } from "@persys/schema";
import type { CallContext, PersysApi } from "../api/persys-api.js";

/** An action resolved for one firing: what it would do, and how to do it through the public API. */
export interface PlannedAction {
  /** e.g. "scale web 2 → 4", "cordon n3". */
  readonly description: string;
  /** Nothing would change (already at max replicas, already cordoned). */
  readonly noop: boolean;
  run(): Promise<string>;
}

/**
 * Resolves a policy's `then` against the cluster now, through the public API only (the same calls
 * a user makes, so the scheduler places and explains every change). `nodeId` is the trigger's node.
 *
 * @throws PersysError when the action cannot be resolved (e.g. the workload is gone).
 */
export async function planAction(
  action: api.PolicyAction | undefined,
  nodeFromTrigger: string | undefined,
  core: PersysApi,
  ctx: CallContext,
  context: { policyId: string; webhookBody: () => unknown },
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
          await core.restartWorkload({ workloadId: a.value.workloadId }, ctx);
          return `${a.value.workloadId} restarting`;
        },
      };
    case "cordon":
    case "drain": {
      const nodeId = a.value.nodeId || nodeFromTrigger || "";
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
    case "webhook":
      return {
        description: `POST ${a.value.url}`,
        noop: false,
        run: async () => {
          const response = await fetch(a.value.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(context.webhookBody()),
            signal: AbortSignal.timeout(10_000),
          });
          if (!response.ok)
            throw new PersysError("UNAVAILABLE", `webhook ${a.value.url} answered HTTP ${response.status}`);
          return `webhook answered HTTP ${response.status}`;
        },
      };
    default:
      throw new PersysError("INVALID_ARGUMENT", "the policy has no action");
  }
}
