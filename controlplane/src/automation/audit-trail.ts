import { api } from "@persys/schema";
import type { EventPayload, EventStore, StoredEvent } from "../events/event-store.js";

export const AUDIT_STREAM = "automation:audit";
export const policyAuditStream = (policyId: string) => `automation:audit:${policyId}`;
/** One entry per cooldown start of a policy, written before its action runs. */
export const cooldownStream = (policyId: string) => `automation:cooldown:${policyId}`;

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
  /** For AWAITING_APPROVAL: the resolved action to run on approval (PolicyAction JSON + trigger facts). */
  readonly pending?: PendingAction;
}

/** What an approval runs: the action as JSON and what the trigger named. */
export interface PendingAction {
  readonly action: unknown;
  readonly nodeId: string;
  readonly replicaIndex?: number;
}

const outcomeName = (o: api.AuditOutcome) => api.auditOutcomeToJSON(o);

/**
 * The audit trail: every record in the global stream `automation:audit` and the policy's own
 * stream (for per-policy reads), capped and expiring like other event streams; and each policy's
 * cooldown starts in `automation:cooldown:<policy>`, so the last one is one read away however
 * many records followed it. Unlike cluster events, a failed write here is an error: automation
 * does not act unaudited.
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

  /**
   * Records that the policy's cooldown starts at `atMs` (its action is about to run, or was
   * dry-run, put up for approval, or failed to resolve). Written before the action, so a leader
   * that dies while acting still leaves the cooldown behind for the next one.
   */
  async startCooldown(policyId: string, atMs: number, action: string, by: string): Promise<void> {
    await this.events.append(cooldownStream(policyId), { fields: { at: String(atMs), action, by } }, { maxLen: 10 });
  }

  /**
   * When the policy's cooldown last started (ms), or undefined when it never did. Falls back to
   * the newest acting record of the policy's audit stream (records written before cooldown
   * streams existed).
   */
  async lastCooldownStart(policyId: string): Promise<number | undefined> {
    const [marker] = await this.events.read(cooldownStream(policyId), { reverse: true, limit: 1 });
    if (marker) return Number(marker.fields.at ?? marker.timeMs);
    const records = await this.list({ policyId, limit: 200 });
    return records.find((r) => ACTING.has(api.auditOutcomeFromJSON(r.fields.outcome ?? "")))?.timeMs;
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
