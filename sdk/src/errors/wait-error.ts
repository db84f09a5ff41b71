import { type api, type ErrorCode, PersysError } from "@persys/schema";

const brand = Symbol.for("persys.sdk.wait-error");

/** Why {@link WaitError} was raised. */
export type WaitOutcome =
  /** The timeout passed before the workload reached the wanted state. */
  | "timeout"
  /** A replica failed in a way Persys will not retry by itself (e.g. IMAGE_NOT_FOUND). */
  | "failed"
  /** The workload disappeared while waiting for another state. */
  | "deleted";

/**
 * A wait ({@link WorkloadsApi.waitFor}) ended without the workload reaching the wanted state.
 *
 * `code` is `DEADLINE_EXCEEDED` for a timeout, `NOT_FOUND` when the workload was deleted, and the
 * failing replica's reason code (`IMAGE_NOT_FOUND`, `PORT_CONFLICT`, ...) for a terminal failure.
 * It carries the last workload seen (with its status) and the scheduler's explanation, so the caller
 * can show why. `instanceof WaitError` works across two loaded copies of the SDK, and every
 * `WaitError` is also a `PersysError`.
 */
export class WaitError extends PersysError {
  /** Why the wait ended. */
  readonly outcome: WaitOutcome;
  /** The state that was waited for, as given (friendly name or enum name). */
  readonly target: string;
  /** The last version of the workload seen; `undefined` when it never existed. */
  readonly workload: api.Workload | undefined;
  /** The placement explanation at the end of the wait, when it could be read. */
  readonly explanation: api.ExplainWorkloadResponse | undefined;

  /** Made by `waitFor`; `retryable` defaults to true for a timeout (waiting longer may help), else false. */
  constructor(
    outcome: WaitOutcome,
    code: ErrorCode,
    message: string,
    fields: {
      target: string;
      workload?: api.Workload | undefined;
      explanation?: api.ExplainWorkloadResponse | undefined;
      retryable?: boolean;
    },
  ) {
    super(code, message, { retryable: fields.retryable ?? outcome === "timeout" });
    this.name = "WaitError";
    this.outcome = outcome;
    this.target = fields.target;
    this.workload = fields.workload;
    this.explanation = fields.explanation;
    Object.defineProperty(this, brand, { value: true });
  }

  /** Recognises a WaitError from any copy of the SDK (decided by a global symbol, not class identity). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** The last status seen (`workload.status`). */
  get lastStatus(): api.WorkloadStatus | undefined {
    return this.workload?.status;
  }
}
