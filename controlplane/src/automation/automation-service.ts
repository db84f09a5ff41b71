import { api, invalid, PersysError } from "@persys/schema";
import type { CallContext, PersysApi } from "../api/persys-api.js";
import type { StoredEvent } from "../events/event-store.js";
import { type AuditTrail, auditRecordOf, type PendingAction } from "./audit-trail.js";
import { planAction } from "./policy-actions.js";
import type { PolicyStore } from "./policy-store.js";

const O = api.AuditOutcome;
const outcomeOf = (e: StoredEvent) => api.auditOutcomeFromJSON(e.fields.outcome ?? "");

/** The `persys.api.v1.AutomationService`: policies, the audit trail and manual approvals. Every server serves it. */
export class AutomationService {
  constructor(
    private readonly policies: PolicyStore,
    private readonly audit: AuditTrail,
    private readonly core: () => PersysApi,
    private readonly serverId: string,
    private readonly now: () => number = Date.now,
  ) {}

  async applyPolicy(request: api.ApplyPolicyRequest): Promise<api.ApplyPolicyResponse> {
    return this.policies.apply(request.policy, new Date(this.now()));
  }

  async listPolicies(_request: api.ListPoliciesRequest): Promise<api.ListPoliciesResponse> {
    return { policies: await this.policies.list() };
  }

  async deletePolicy(request: api.DeletePolicyRequest): Promise<api.DeletePolicyResponse> {
    if (!request.policyId) throw invalid("INVALID_ARGUMENT", [{ path: "policyId", reason: "is required" }]);
    await this.policies.delete(request.policyId, request.allowMissing);
    return {};
  }

  async listAuditRecords(request: api.ListAuditRecordsRequest): Promise<api.ListAuditRecordsResponse> {
    if (request.limit < 0 || request.limit > 1000)
      throw invalid("INVALID_ARGUMENT", [{ path: "limit", reason: "must be 0..1000" }]);
    const limit = request.limit || 100;
    if (!request.awaitingApproval) {
      const stored = await this.audit.list({ ...(request.policyId ? { policyId: request.policyId } : {}), limit });
      return { records: stored.map(auditRecordOf) };
    }
    const stored = await this.audit.list({ ...(request.policyId ? { policyId: request.policyId } : {}), limit: 1000 });
    const decided = new Set(
      stored
        .filter((e) => outcomeOf(e) !== O.AUDIT_OUTCOME_AWAITING_APPROVAL && e.fields.approval)
        .map((e) => e.fields.approval),
    );
    const open = stored.filter(
      (e) => outcomeOf(e) === O.AUDIT_OUTCOME_AWAITING_APPROVAL && !decided.has(e.fields.approval),
    );
    return { records: open.slice(0, limit).map(auditRecordOf) };
  }

  /**
   * Runs (or rejects) an action awaiting approval, through the public API, and records the outcome.
   *
   * @throws PersysError NOT_FOUND for an unknown approval id, CONFLICT when it was already decided.
   */
  async approveAction(request: api.ApproveActionRequest, ctx: CallContext): Promise<api.ApproveActionResponse> {
    if (!request.approvalId) throw invalid("INVALID_ARGUMENT", [{ path: "approvalId", reason: "is required" }]);
    const stored = await this.audit.list({ limit: 10_000 });
    const waiting = stored.find(
      (e) => e.fields.approval === request.approvalId && outcomeOf(e) === O.AUDIT_OUTCOME_AWAITING_APPROVAL,
    );
    if (!waiting) {
      throw new PersysError("NOT_FOUND", `no action awaits approval ${request.approvalId}`, {
        details: [{ path: "approvalId", reason: "unknown or expired" }],
      });
    }
    if (
      stored.some((e) => e.fields.approval === request.approvalId && outcomeOf(e) !== O.AUDIT_OUTCOME_AWAITING_APPROVAL)
    ) {
      throw new PersysError("CONFLICT", `approval ${request.approvalId} was already decided`);
    }
    const policyId = waiting.fields.policy ?? "";
    const base = {
      policyId,
      observed: waiting.fields.observed ?? "",
      action: waiting.fields.action ?? "",
      approvalId: request.approvalId,
      evaluatedBy: this.serverId,
    };
    if (request.reject) {
      return {
        record: await this.audit.record({
          ...base,
          outcome: O.AUDIT_OUTCOME_REJECTED,
          message: `rejected by ${ctx.identity ?? "an operator"}`,
        }),
      };
    }
    const pending = (waiting.payload as { pending?: PendingAction } | undefined)?.pending;
    try {
      const planned = await planAction(
        api.PolicyAction.fromJSON(pending?.action ?? {}),
        { nodeId: pending?.nodeId || undefined, replicaIndex: pending?.replicaIndex },
        this.core(),
        {
          ...ctx,
          identity: `automation:${policyId}`,
        },
        {
          policyId,
          webhookBody: () => ({ policy: policyId, approvalId: request.approvalId }),
          onRetry: (a) =>
            this.audit
              .record({
                ...base,
                outcome: O.AUDIT_OUTCOME_RETRYING,
                message: `attempt ${a.attempt} of ${a.maxAttempts} failed: ${a.failure}; next in ${a.retryInMs} ms`,
              })
              .then(() => undefined),
        },
      );
      const message = await planned.run();
      return {
        record: await this.audit.record({
          ...base,
          action: planned.description,
          outcome: O.AUDIT_OUTCOME_ACTED,
          message: `approved by ${ctx.identity ?? "an operator"}: ${message}`,
        }),
      };
    } catch (error) {
      return {
        record: await this.audit.record({
          ...base,
          outcome: O.AUDIT_OUTCOME_FAILED,
          message: String((error as Error).message ?? error),
        }),
      };
    }
  }
}
