import { type ErrorCode, PersysError } from "@persys/schema";
import {
  EtcdLeaseInvalidError,
  EtcdPermissionDeniedError,
  GRPCDeadlineExceededError,
  GRPCInvalidArgumentError,
  GRPCUnauthenticatedError,
  isRecoverableError,
} from "etcd3";
import { compactedError, leaseNotFound } from "../state-store-errors.js";

/** What the failing call was, for the message and for errors that name a field. */
export interface EtcdCallContext {
  /** The operation, e.g. "put". */
  readonly op: string;
  /** The lease the call used, and the paths of the fields that carried it. */
  readonly lease?: { readonly id: string; readonly paths: readonly string[] };
  /** For watches: the revision the watch resumes after. */
  readonly afterRevision?: number;
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND"]);

/**
 * Maps an etcd3 / gRPC failure to a typed PersysError: compaction → COMPACTED, an unknown lease →
 * NOT_FOUND naming the lease field(s), a rejected request → INVALID_ARGUMENT, a timeout →
 * DEADLINE_EXCEEDED, connection trouble (unreachable, circuit open, reset) → UNAVAILABLE, an etcd out of
 * space → STORAGE_ERROR (not retryable: an operator must compact and defragment), anything else →
 * STORAGE_ERROR (retryable).
 */
export function etcdError(error: unknown, context: EtcdCallContext): PersysError {
  if (error instanceof PersysError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const where = `etcd ${context.op} failed`;
  const make = (code: ErrorCode, text: string, retryable?: boolean) =>
    new PersysError(code, `${where}: ${text}`, { cause: error, ...(retryable === undefined ? {} : { retryable }) });

  if (message.includes("required revision has been compacted")) {
    return compactedError(context.afterRevision ?? 0, undefined);
  }
  if (error instanceof EtcdLeaseInvalidError || message.includes("requested lease not found")) {
    const lease = context.lease;
    if (!lease) return make("NOT_FOUND", message);
    const base = leaseNotFound(lease.id, lease.paths[0]);
    const details = lease.paths.map((path) => ({ path, reason: base.details[0]!.reason }));
    return new PersysError("NOT_FOUND", base.message, { details, cause: error });
  }
  if (message.includes("database space exceeded")) {
    return make("STORAGE_ERROR", `${message} (etcd raised its NOSPACE alarm: compact, defragment, disarm)`, false);
  }
  if (error instanceof GRPCInvalidArgumentError) {
    return new PersysError("INVALID_ARGUMENT", `${where}: etcd rejected the request: ${message}`, {
      cause: error,
      details: [{ path: "request", reason: message }],
    });
  }
  if (error instanceof GRPCDeadlineExceededError) return make("DEADLINE_EXCEEDED", message);
  if (error instanceof GRPCUnauthenticatedError) return make("UNAUTHENTICATED", message);
  if (error instanceof EtcdPermissionDeniedError) return make("PERMISSION_DENIED", message);
  const name = error instanceof Error ? error.constructor.name : "";
  const code = (error as { code?: unknown } | undefined)?.code;
  if (
    name === "BrokenCircuitError" ||
    name === "ClientClosedError" ||
    (error instanceof Error && isRecoverableError(error)) ||
    (typeof code === "string" && NETWORK_CODES.has(code))
  ) {
    return make("UNAVAILABLE", `etcd is unreachable or failing: ${message}`);
  }
  return make("STORAGE_ERROR", message);
}
