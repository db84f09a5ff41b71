import { type ErrorCode, errorRegistry, isErrorCode } from "./error-registry.js";

/** One offending input: a dotted field path (`spec.container.ports[0].hostPort`) and why. */
export interface FieldViolation {
  readonly path: string;
  readonly reason: string;
}

/** The one error shape on every wire (REST body, gRPC status details, Pulumi check failures). */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: FieldViolation[];
  retryable: boolean;
}

const brand = Symbol.for("persys.error");

/**
 * A typed Persys error. `instanceof` works across two loaded copies of this package because it is
 * decided by a global symbol, not by the class identity.
 */
export class PersysError extends Error {
  readonly code: ErrorCode;
  readonly details: readonly FieldViolation[];
  readonly retryable: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: readonly FieldViolation[]; retryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PersysError";
    this.code = code;
    this.details = options.details ?? [];
    this.retryable = options.retryable ?? errorRegistry[code].retryable;
    Object.defineProperty(this, brand, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** HTTP status for this error's code. */
  get httpStatus(): number {
    return errorRegistry[this.code].http;
  }

  /** gRPC status for this error's code. */
  get grpcStatus(): number {
    return errorRegistry[this.code].grpc;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, details: [...this.details], retryable: this.retryable };
  }

  /** Rebuilds an error from its wire body; an unknown code becomes INTERNAL, keeping the text. */
  static fromBody(body: { code?: unknown; message?: unknown; details?: unknown; retryable?: unknown }): PersysError {
    const code = isErrorCode(body.code) ? body.code : "INTERNAL";
    const details = Array.isArray(body.details)
      ? body.details
          .filter((d): d is FieldViolation => typeof d?.path === "string" && typeof d?.reason === "string")
          .map((d) => ({ path: d.path, reason: d.reason }))
      : [];
    const message = typeof body.message === "string" ? body.message : String(body.code ?? "unknown error");
    return new PersysError(code, message, {
      details,
      ...(typeof body.retryable === "boolean" ? { retryable: body.retryable } : {}),
    });
  }
}

/** An error for bad input: one message naming every offending field. */
export function invalid(
  code: Extract<ErrorCode, "INVALID_SPEC" | "INVALID_ARGUMENT" | "INVALID_CONFIG">,
  details: readonly FieldViolation[],
  subject = "input",
): PersysError {
  const list = details.map((d) => `${d.path}: ${d.reason}`).join("; ");
  return new PersysError(code, `invalid ${subject}: ${list}`, { details });
}
