import { api } from "@persys/schema";
import type { EventPayload, EventStore, StoredEvent } from "../events/event-store.js";

export const AUDIT_STREAM = "automation:audit";
export const policyAuditStream = (policyId: string) => `automation:audit:${policyId}`;

/** One record as the engine writes it. */
export interface AuditEntry {
  readonly policyId: string;
  readonly outcome: api.AuditOutcome;
  readonly observed: string;
  readonly action: string;
  readonly message: string;
  readonly approvalId?: string;
  readonly evaluatedBy: string;
  readonly evidence?: readonly api.Evidence[];
  /** For AWAITING_APPROVAL: the resolved action to run on approval (PolicyAction JSON + node). */
  readonly pending?: { readonly action: unknown; readonly nodeId: string };
}

const outcomeName = (o: api.AuditOutcome) => api.auditOutcomeToJSON(o);

/**
 * The audit trail: every record in the global stream `automation:audit` and the policy's own
 * stream (for cooldowns and per-policy reads), capped and expiring like other event streams.
 * Unlike cluster events, a failed write here is an error: automation does not act unaudited.
 */
export class AuditTrail {
  constructor(private readonly events: Pick<EventStore, "append" | "read">) {}

  async record(entry: AuditEntry): Promise<api.AuditRecord> {
    const fields: Record<string, string> = {
      policy: entry.policyId,
      outcome: outcomeName(entry.outcome),
      observed: entry.observed,
      action: entry.action,
      message: entry.message,
      by: entry.evaluatedBy,
    };
    if (entry.approvalId) fields.approval = entry.approvalId;
    const payload: EventPayload = {
      evidence: (entry.evidence ?? []).map((e) => api.Evidence.toJSON(e) as EventPayload),
      ...(entry.pending ? { pending: entry.pending as unknown as EventPayload } : {}),
    };
    const id = await this.events.append(AUDIT_STREAM, { fields, payload });
    await this.events.append(policyAuditStream(entry.policyId), { fields: { ...fields, globalId: id }, payload });
    return auditRecordOf({ stream: AUDIT_STREAM, id, timeMs: Number(id.split("-")[0]), fields, payload });
  }

  /** Newest first. */
  async list(options: { policyId?: string; limit: number }): Promise<StoredEvent[]> {
    return this.events.read(options.policyId ? policyAuditStream(options.policyId) : AUDIT_STREAM, {
      reverse: true,
      limit: options.limit,
    });
  }
}

/** The API form of a stored audit record (ids are the global stream's). */
export function auditRecordOf(stored: StoredEvent): api.AuditRecord {
  const f = stored.fields;
  const payload = (stored.payload ?? {}) as { evidence?: unknown[] };
  return {
    id: f.globalId ?? stored.id,
    time: new Date(stored.timeMs),
    policyId: f.policy ?? "",
    outcome: api.auditOutcomeFromJSON(f.outcome ?? "AUDIT_OUTCOME_UNSPECIFIED"),
    observed: f.observed ?? "",
    action: f.action ?? "",
    message: f.message ?? "",
    approvalId: f.approval ?? "",
    evaluatedBy: f.by ?? "",
    evidence: (payload.evidence ?? []).map((e) => api.Evidence.fromJSON(e)),
  };
}

/** Outcomes that start a cooldown. */
export const ACTING = new Set([
  api.AuditOutcome.AUDIT_OUTCOME_ACTED,
  api.AuditOutcome.AUDIT_OUTCOME_DRY_RUN,
  api.AuditOutcome.AUDIT_OUTCOME_AWAITING_APPROVAL,
  api.AuditOutcome.AUDIT_OUTCOME_FAILED,
]);
