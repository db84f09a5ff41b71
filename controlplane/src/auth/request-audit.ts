import type { EventRecorder } from "../cluster/event-recorder.js";
import { errorCodeOf } from "./error-code-of.js";
import type { Principal } from "./principal.js";

/** What one audited call did, for the `RequestAudited` event. */
export interface AuditEntry {
  readonly method: string;
  readonly principal: Principal | undefined;
  readonly requestId: string | undefined;
  readonly workloadId?: string;
  readonly nodeId?: string;
  /** `undefined`: succeeded; else the failure. */
  readonly error?: unknown;
}

/**
 * Records who did what, when, with which result, as a `RequestAudited` event in the event store
 * (readable with `persysctl get events --type RequestAudited`). Request bodies are never recorded:
 * they may carry secrets.
 */
export class RequestAudit {
  constructor(private readonly events: Pick<EventRecorder, "record">) {}

  record(entry: AuditEntry): void {
    const who = entry.principal ? entry.principal.name : "unauthenticated caller";
    const result = entry.error === undefined ? "OK" : errorCodeOf(entry.error);
    void this.events.record({
      type: "RequestAudited",
      severity: entry.error === undefined ? "info" : "warning",
      message: `${who} called ${entry.method}: ${result}`,
      // In the global stream only (attributes name the workload): a workload's own timeline tells
      // what happened to it, the audit trail who asked.
      ...(entry.nodeId ? { nodeId: entry.nodeId } : {}),
      attributes: {
        ...(entry.workloadId ? { workload: entry.workloadId } : {}),
        who,
        role: entry.principal?.role ?? "",
        via: entry.principal?.via ?? "",
        method: entry.method,
        result,
        ...(entry.requestId ? { requestId: entry.requestId } : {}),
      },
    });
  }
}
