import { Metadata, type ServiceError, type StatusObject, status } from "@grpc/grpc-js";
import { api, type ErrorCode, GrpcStatus, isErrorCode, PersysError } from "@persys/schema";

/** Binary trailer carrying the encoded `persys.api.v1.Error` of a failed call. */
export const PERSYS_ERROR_TRAILER = "persys-error-bin";

/** The `persys.api.v1.Error` message of a PersysError (numeric code, as encoded on the wire). */
export function toApiError(error: PersysError): api.Error {
  return api.Error.fromPartial({
    code: api.ErrorCode[error.code],
    message: error.message,
    details: error.details.map((d) => ({ path: d.path, reason: d.reason })),
    retryable: error.retryable,
  });
}

/**
 * The gRPC status of a failed call: the registry's gRPC code for the error code, the message as the
 * status details, and the whole error in the `persys-error-bin` trailer.
 */
export function toGrpcStatus(error: PersysError): StatusObject {
  const metadata = new Metadata();
  metadata.set(PERSYS_ERROR_TRAILER, Buffer.from(api.Error.encode(toApiError(error)).finish()));
  return { code: error.grpcStatus as status, details: error.message, metadata };
}

/**
 * Client side: the PersysError a failed call carried. Reads the `persys-error-bin` trailer when there
 * is one (an unknown or garbled code becomes INTERNAL, keeping the message); otherwise — the error came
 * from grpc-js itself or from a proxy — derives the code from the gRPC status (UNAVAILABLE for a
 * refused connection, DEADLINE_EXCEEDED, CANCELLED, ...). Never throws.
 */
export function persysErrorFromServiceError(
  error: Pick<ServiceError, "code" | "details" | "metadata"> & { message?: string },
): PersysError {
  const fromTrailer = decodeTrailer(error.metadata);
  if (fromTrailer) return fromTrailer;
  const code = codeForGrpcStatus(error.code);
  const message = error.details || error.message || `gRPC status ${error.code}`;
  return new PersysError(code, message, { cause: error });
}

function decodeTrailer(metadata: Metadata | undefined): PersysError | undefined {
  const value = metadata?.get(PERSYS_ERROR_TRAILER)[0];
  if (!(value instanceof Uint8Array)) return undefined;
  try {
    const wire = api.Error.decode(value);
    const name = api.ErrorCode[wire.code];
    return new PersysError(isErrorCode(name) ? name : "INTERNAL", wire.message, {
      details: wire.details.map((d) => ({ path: d.path, reason: d.reason })),
      retryable: wire.retryable,
    });
  } catch {
    return undefined;
  }
}

const byGrpcStatus: Record<number, ErrorCode> = {
  [GrpcStatus.CANCELLED]: "CANCELLED",
  [GrpcStatus.INVALID_ARGUMENT]: "INVALID_ARGUMENT",
  [GrpcStatus.DEADLINE_EXCEEDED]: "DEADLINE_EXCEEDED",
  [GrpcStatus.NOT_FOUND]: "NOT_FOUND",
  [GrpcStatus.ALREADY_EXISTS]: "ALREADY_EXISTS",
  [GrpcStatus.PERMISSION_DENIED]: "PERMISSION_DENIED",
  [GrpcStatus.RESOURCE_EXHAUSTED]: "UNAVAILABLE",
  [GrpcStatus.FAILED_PRECONDITION]: "INVALID_ARGUMENT",
  [GrpcStatus.ABORTED]: "CONFLICT",
  [GrpcStatus.OUT_OF_RANGE]: "INVALID_ARGUMENT",
  [GrpcStatus.UNAVAILABLE]: "UNAVAILABLE",
  [GrpcStatus.UNAUTHENTICATED]: "UNAUTHENTICATED",
};

/** The registry code closest to a bare gRPC status (no Persys trailer); INTERNAL when none is. */
export function codeForGrpcStatus(code: number): ErrorCode {
  return byGrpcStatus[code] ?? "INTERNAL";
}

/** The status name for metrics and logs, e.g. `NOT_FOUND`. */
export function grpcStatusName(code: number): string {
  return status[code] ?? String(code);
}
