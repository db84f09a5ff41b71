import { api } from "@persys/schema";
import type { Logger } from "pino";
import type { CallContext, PersysApi } from "../api/persys-api.js";
import type { IntelligenceSources } from "../intelligence/intelligence-sources.js";
import type { AuditEntry, AuditTrail } from "./audit-trail.js";
import { planAction } from "./policy-actions.js";
import type { PolicyStore } from "./policy-store.js";
import { POLICY_DEFAULTS } from "./policy-validation.js";
import { evaluateTrigger } from "./trigger-evaluation.js";

export interface AutomationEngineOptions {
  readonly policies: PolicyStore;
  readonly audit: AuditTrail;
  readonly sources: IntelligenceSources;
  /** The public API the actions go through. */
  readonly core: PersysApi;
  readonly intervalMs: number;
  /** This server's id, written on every record. */
  readonly serverId: string;
  readonly logger?: Logger;
}

const O = api.AuditOutcome;

/**
 * Evaluates every policy once per interval while this server leads (the control plane starts it on
 * election and stops it when deposed). Each evaluation that matches — and each change back to not
 * matching — is written to the audit trail before anything acts; actions go through the public
 * API as `automation:<policy>`. A cooldown starts with a durable marker written before the action
 * runs (`AuditTrail.startCooldown`) and is read back from it, so a new leader honours the old
 * one's even when the old one died mid-action.
 */
export class AutomationEngine {
  private timer: NodeJS.Timeout | undefined;
  private tick: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly lastActed = new Map<string, number | null>();
  private readonly lastMatched = new Map<string, boolean>();

  constructor(private readonly o: AutomationEngineOptions) {}

  start(): void {
    const loop = () => {
      this.tick = this.evaluateAll()
        .catch((error) => this.o.logger?.warn({ err: String(error) }, "automation evaluation failed"))
        .finally(() => {
          if (!this.abort.signal.aborted) this.timer = setTimeout(loop, this.o.intervalMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.tick;
  }

  /** One evaluation of every policy (in id order). */
  async evaluateAll(): Promise<void> {
    for (const policy of await this.o.policies.list()) {
      if (this.abort.signal.aborted) return;
      await this.evaluate(policy).catch((error) =>
        this.o.logger?.warn({ err: String(error), policy: policy.id }, "policy evaluation failed"),
      );
    }
  }

  /** Read from the store once per term (this engine lives for one term), then kept in step. */
  private async lastActedOf(policyId: string): Promise<number | undefined> {
    if (!this.lastActed.has(policyId))
      this.lastActed.set(policyId, (await this.o.audit.lastCooldownStart(policyId)) ?? null);
    return this.lastActed.get(policyId) ?? undefined;
  }

  /** Durably first, so a failover in the middle of the action still finds the cooldown. */
  private async startCooldown(policyId: string, now: number, action: string): Promise<void> {
    await this.o.audit.startCooldown(policyId, now, action, this.o.serverId);
    this.lastActed.set(policyId, now);
  }

  private async evaluate(policy: api.Policy): Promise<void> {
    const now = this.o.sources.now();
    const lastActed = await this.lastActedOf(policy.id);
    const result = await evaluateTrigger(policy, this.o.sources, now, lastActed);
    const base = {
      policyId: policy.id,
      observed: result.observed,
      evaluatedBy: this.o.serverId,
      evidence: result.evidence,
    };
    const record = (entry: Omit<AuditEntry, keyof typeof base>) => this.o.audit.record({ ...base, ...entry });
    if (!result.matched) {
      if (this.lastMatched.get(policy.id))
        await record({ outcome: O.AUDIT_OUTCOME_NOT_MATCHED, action: "", message: "trigger no longer matches" });
      this.lastMatched.set(policy.id, false);
      return;
    }
    this.lastMatched.set(policy.id, true);
    const cooldownMs = (policy.cooldownSeconds || POLICY_DEFAULTS.cooldownSeconds) * 1000;
    if (lastActed !== undefined && now - lastActed < cooldownMs) {
      const left = Math.ceil((cooldownMs - (now - lastActed)) / 1000);
      await record({ outcome: O.AUDIT_OUTCOME_COOLDOWN, action: "", message: `cooling down for ${left} s more` });
      return;
    }
    const ctx: CallContext = {
      signal: this.abort.signal,
      identity: `automation:${policy.id}`,
      requestId: `automation-${policy.id}-${now}`,
    };
    const subject = { nodeId: result.nodeId, workloadId: result.workloadId, replicaIndex: result.replicaIndex };
    let planned: Awaited<ReturnType<typeof planAction>>;
    try {
      planned = await planAction(policy.action, subject, this.o.core, ctx, {
        policyId: policy.id,
        webhookBody: () => ({ policy: policy.id, observed: result.observed, time: new Date(now).toISOString() }),
        onRetry: (a) =>
          record({
            outcome: O.AUDIT_OUTCOME_RETRYING,
            action: planned.description,
            message: `attempt ${a.attempt} of ${a.maxAttempts} failed: ${a.failure}; next in ${a.retryInMs} ms`,
          }).then(() => undefined),
      });
    } catch (error) {
      await this.startCooldown(policy.id, now, "");
      await record({ outcome: O.AUDIT_OUTCOME_FAILED, action: "", message: String((error as Error).message ?? error) });
      return;
    }
    if (planned.noop) {
      await record({ outcome: O.AUDIT_OUTCOME_NO_CHANGE, action: planned.description, message: "nothing to change" });
      return;
    }
    await this.startCooldown(policy.id, now, planned.description);
    if (policy.dryRun) {
      await record({
        outcome: O.AUDIT_OUTCOME_DRY_RUN,
        action: planned.description,
        message: "dry run: nothing changed",
      });
      return;
    }
    if (policy.approval === api.PolicyApproval.POLICY_APPROVAL_MANUAL) {
      await record({
        outcome: O.AUDIT_OUTCOME_AWAITING_APPROVAL,
        action: planned.description,
        message: `approve with: persysctl policy approve ${policy.id}-${now}`,
        approvalId: `${policy.id}-${now}`,
        pending: {
          action: api.PolicyAction.toJSON(resolvedAction(policy.action!, result.workloadId)),
          nodeId: result.nodeId ?? "",
          ...(result.replicaIndex !== undefined ? { replicaIndex: result.replicaIndex } : {}),
        },
      });
      return;
    }
    try {
      const message = await planned.run();
      await record({ outcome: O.AUDIT_OUTCOME_ACTED, action: planned.description, message });
    } catch (error) {
      await record({
        outcome: O.AUDIT_OUTCOME_FAILED,
        action: planned.description,
        message: String((error as Error).message ?? error),
      });
    }
  }
}

/** The action with the subject a finding supplied filled in, so an approval runs the same thing later. */
function resolvedAction(action: api.PolicyAction, workloadId: string | undefined): api.PolicyAction {
  const kind = action.kind;
  if (kind?.$case === "move" && !kind.value.workloadId && workloadId)
    return { kind: { $case: "move", value: { ...kind.value, workloadId } } };
  return action;
}
