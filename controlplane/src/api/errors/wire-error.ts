import { PersysError } from "@persys/schema";

/** What a transport sends for a failure, and whether it was an error the core did not mean to throw. */
export interface ClassifiedError {
  readonly error: PersysError;
  /** True for anything but a PersysError: the transport logs it with its stack; clients see only a safe text. */
  readonly unexpected: boolean;
}

/**
 * Turns anything a handler threw into the error that goes on the wire. A `PersysError` passes as is.
 * An `AbortError` (the call's signal fired) becomes CANCELLED. Anything else becomes INTERNAL with a
 * message that names the request id but never the original text (it may hold internals or secrets).
 */
export function classifyError(thrown: unknown, requestId?: string): ClassifiedError {
  if (thrown instanceof PersysError) return { error: thrown, unexpected: false };
  if (isAbortError(thrown)) {
    return { error: new PersysError("CANCELLED", "the call was cancelled", { cause: thrown }), unexpected: false };
  }
  const where = requestId ? ` (request id ${requestId})` : "";
  return {
    error: new PersysError("INTERNAL", `internal error${where}; the server log has the details`, { cause: thrown }),
    unexpected: true,
  };
}

function isAbortError(thrown: unknown): boolean {
  return thrown instanceof Error && (thrown.name === "AbortError" || thrown.name === "TimeoutError");
}
