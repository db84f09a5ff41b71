import { Metadata, type ServiceError, type StatusObject, type status } from "@grpc/grpc-js";
import { Error as ApiError, ErrorCode as ApiErrorCode } from "../gen/persys/api/v1/errors.js";
import { type ErrorCode, GrpcStatus, isErrorCode } from "./error-registry.js";
import { PersysError } from "./persys-error.js";

/**
 * The gRPC side of the error model, shared by servers (controlplane) and clients (SDK, CLI,
 * provider): a failed call carries the registry's gRPC status, the message as the status details,
 * and the whole `persys.api.v1.Error` in the binary trailer `persys-error-bin`.
 */

/** Binary trailer carrying the encoded `persys.api.v1.Error` of a failed call. */
export const PERSYS_ERROR_TRAILER = "persys-error-bin";

/** The `persys.api.v1.Error` message of a PersysError (numeric code, as encoded on the wire). */
export function toApiError(error: PersysError): ApiError {
  return ApiError.fromPartial({
    code: ApiErrorCode[error.code],
    message: error.message,
    details: error.details.map((d) => ({ path: d.path, reason: d.reason })),
    retryable: error.retryable,
  });
}

/** The PersysError of a decoded `persys.api.v1.Error`; an unknown numeric code becomes INTERNAL. */
export function fromApiError(wire: ApiError): PersysError {
  const name = ApiErrorCode[wire.code];
  return new PersysError(isErrorCode(name) ? name : "INTERNAL", wire.message, {
    details: wire.details.map((d) => ({ path: d.path, reason: d.reason })),
    retryable: wire.retryable,
  });
}

/** The bytes of the `persys-error-bin` trailer for `error`. */
export function encodeErrorTrailer(error: PersysError): Buffer {
  return Buffer.from(ApiError.encode(toApiError(error)).finish());
}

/** The error in a `persys-error-bin` trailer value, or `undefined` when it does not decode. Never throws. */
export function decodeErrorTrailer(value: Uint8Array): PersysError | undefined {
  try {
    return fromApiError(ApiError.decode(value));
  } catch {
    return undefined;
  }
}

/**
 * The gRPC status of a failed call: the registry's gRPC code for the error code, the message as the
 * status details, and the whole error in the `persys-error-bin` trailer.
 */
export function toGrpcStatus(error: PersysError): StatusObject {
  const metadata = new Metadata();
  metadata.set(PERSYS_ERROR_TRAILER, encodeErrorTrailer(error));
  return { code: error.grpcStatus as status, details: error.message, metadata };
}

/**
 * Client side: the PersysError a failed call carried. Reads the `persys-error-bin` trailer when there
 * is one (an unknown or garbled code becomes INTERNAL, keeping the message); otherwise — the error came
 * from grpc-js itself or from a proxy — derives the code from the gRPC status (UNAVAILABLE for a
 * refused connection, DEADLINE_EXCEEDED, CANCELLED, ...). The original error is the `cause`. Never throws.
 */
export function persysErrorFromServiceError(
  error: Pick<ServiceError, "code" | "details" | "metadata"> & { message?: string },
): PersysError {
  const value = error.metadata?.get(PERSYS_ERROR_TRAILER)[0];
  const fromTrailer = value instanceof Uint8Array ? decodeErrorTrailer(value) : undefined;
  if (fromTrailer) return fromTrailer;
  const code = codeForGrpcStatus(error.code);
  const message = error.details || error.message || `gRPC status ${error.code}`;
  return new PersysError(code, message, { cause: error });
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
