import { status } from "@grpc/grpc-js";

// The wire mapping of errors lives in @persys/schema so the SDK and the server share one codec.
export {
  codeForGrpcStatus,
  PERSYS_ERROR_TRAILER,
  persysErrorFromServiceError,
  toApiError,
  toGrpcStatus,
} from "@persys/schema";

/** The status name for metrics and logs, e.g. `NOT_FOUND`. */
export function grpcStatusName(code: number): string {
  return status[code] ?? String(code);
}
