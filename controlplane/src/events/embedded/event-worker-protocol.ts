import { type ErrorCode, type FieldViolation, isErrorCode, PersysError } from "@persys/schema";
import type { EventStoreHealth } from "../event-store.js";

/** The EmbeddedEventStore methods the worker serves (see embedded-event-worker.ts). */
export type WorkerMethod =
  | "append"
  | "appendEach"
  | "read"
  | "incr"
  | "getCounter"
  | "addSample"
  | "range"
  | "lastIds"
  | "fetchAfter"
  | "close";

/** Main thread → worker; sent in arrays, one per turn of the event loop. */
export type WorkerRequest =
  | { readonly id: number; readonly method: WorkerMethod; readonly args: readonly unknown[] }
  /** Ends a waiting `fetchAfter` (its subscription was closed). */
  | { readonly cancel: number };

/** Worker → main thread; sent in arrays. */
export type WorkerReply =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: WireError }
  | { readonly health: EventStoreHealth }
  | { readonly ready: true; readonly health: EventStoreHealth }
  | { readonly failed: WireError };

/** A failure as it crosses the thread boundary (classes do not survive structured cloning). */
export interface WireError {
  readonly code?: ErrorCode;
  readonly message: string;
  readonly details?: readonly FieldViolation[];
  readonly retryable?: boolean;
}

export function toWire(error: unknown): WireError {
  if (error instanceof PersysError)
    return { code: error.code, message: error.message, details: error.details, retryable: error.retryable };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** The PersysError a WireError stands for (STORAGE_ERROR when the worker threw something untyped). */
export function fromWire(wire: WireError): PersysError {
  const code = wire.code && isErrorCode(wire.code) ? wire.code : "STORAGE_ERROR";
  return new PersysError(code, wire.message, {
    ...(wire.details ? { details: [...wire.details] } : {}),
    ...(wire.retryable === undefined ? {} : { retryable: wire.retryable }),
  });
}
