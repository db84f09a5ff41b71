import { type api, PersysError } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";
import { policyFromDocument } from "./policy-input.js";

/** Options of {@link AutomationApi.audit}. */
export interface AuditOptions extends CallOptions {
  /** One policy's records only. */
  readonly policyId?: string | undefined;
  /** Only actions awaiting approval that nobody approved or rejected yet. */
  readonly awaitingApproval?: boolean | undefined;
  /** At most this many, newest first (the server's default 100, at most 1000). */
  readonly limit?: number | undefined;
}

/**
 * Automation policies: `when` a metric crosses a threshold over a window, a cron schedule matches,
 * an intelligence finding exists or events match, `then` scale, restart, cordon, drain or call a
 * webhook — with a cooldown, dry run and manual approval. The leader evaluates them and acts
 * through the public API; every matching evaluation and action lands in the audit trail.
 *
 * ```ts
 * await client.automation.apply({
 *   id: "web-autoscale",
 *   when: { metric: { workloadId: "web", metric: "cpu", threshold: 80, windowSeconds: 60 } },
 *   action: { scale: { workloadId: "web", step: 2, minReplicas: 2, maxReplicas: 8 } }, // `then:` in YAML files
 *   cooldownSeconds: 300,
 * });
 * for (const r of await client.automation.audit({ policyId: "web-autoscale" })) console.log(r.outcome, r.action);
 * ```
 */
export class AutomationApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.AutomationServiceClient,
  ) {}

  /**
   * Creates or replaces a policy (idempotent by id and content). Takes a `Policy` message or its
   * YAML/JSON document (see {@link policyFromDocument}). Rejects with INVALID_ARGUMENT naming every
   * bad field.
   */
  async apply(
    policy: api.Policy | Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<api.ApplyPolicyResponse> {
    const message = isPolicyMessage(policy) ? policy : policyFromDocument(policy);
    return this.runner.unary<api.ApplyPolicyResponse>(
      (md, o, cb) => this.client.applyPolicy({ policy: message }, md, o, cb),
      options,
    );
  }

  /** Every policy, ordered by id. */
  async list(options: CallOptions = {}): Promise<api.Policy[]> {
    const response = await this.runner.unary<api.ListPoliciesResponse>(
      (md, o, cb) => this.client.listPolicies({}, md, o, cb),
      options,
    );
    return response.policies;
  }

  /** Deletes a policy; NOT_FOUND when missing unless `allowMissing`. */
  async delete(policyId: string, options: CallOptions & { allowMissing?: boolean } = {}): Promise<void> {
    await this.runner.unary<api.DeletePolicyResponse>(
      (md, o, cb) => this.client.deletePolicy({ policyId, allowMissing: options.allowMissing ?? false }, md, o, cb),
      options,
    );
  }

  /** Audit records, newest first. */
  async audit(options: AuditOptions = {}): Promise<api.AuditRecord[]> {
    const response = await this.runner.unary<api.ListAuditRecordsResponse>(
      (md, o, cb) =>
        this.client.listAuditRecords(
          {
            policyId: options.policyId ?? "",
            awaitingApproval: options.awaitingApproval ?? false,
            limit: options.limit ?? 0,
          },
          md,
          o,
          cb,
        ),
      options,
    );
    return response.records;
  }

  /**
   * Runs (or, with `reject`, rejects) an action awaiting approval; resolves with the resulting
   * audit record (ACTED, FAILED or REJECTED). NOT_FOUND for an unknown id, CONFLICT when decided.
   */
  async approve(approvalId: string, options: CallOptions & { reject?: boolean } = {}): Promise<api.AuditRecord> {
    const response = await this.runner.unary<api.ApproveActionResponse>(
      (md, o, cb) => this.client.approveAction({ approvalId, reject: options.reject ?? false }, md, o, cb),
      options,
    );
    if (!response.record) throw new PersysError("INTERNAL", "the server sent no audit record");
    return response.record;
  }
}

function isPolicyMessage(value: unknown): value is api.Policy {
  const v = value as { when?: object; action?: object };
  return typeof v === "object" && v !== null && ("trigger" in (v.when ?? {}) || "kind" in (v.action ?? {}));
}
