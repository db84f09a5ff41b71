import { randomUUID } from "node:crypto";
import type { ServerUnaryCall } from "@grpc/grpc-js";
import { PersysError } from "@persys/schema";
import { bearerToken } from "../../auth/authenticator.js";
import type { CallCredentials } from "../../auth/principal.js";
import { certificateSubject } from "../../pki/principal.js";
import type { CallContext } from "../persys-api.js";

/** What this module needs of a server call (unary, streaming and duplex calls all have it). */
export type ServerSurfaceCall = Pick<
  ServerUnaryCall<unknown, unknown>,
  "on" | "removeListener" | "metadata" | "getDeadline" | "getAuthContext" | "getPath"
>;

/** What a call shows of its caller (verified certificate subject, bearer token); checked later by the auth layer. */
export type GrpcIdentify = (call: ServerSurfaceCall) => CallCredentials;

/** A CallContext bound to one gRPC call, and the function that releases its timer and listeners. */
export interface GrpcCallScope {
  readonly ctx: CallContext;
  readonly controller: AbortController;
  dispose(): void;
}

/** What a client-chosen request id may look like (it lands in logs and events). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The longest timer Node accepts (about 24.8 days); later deadlines are treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A CallContext for one gRPC call: its signal aborts when the client cancels (reason CANCELLED) or
 * the call's deadline passes (reason DEADLINE_EXCEEDED). The request id is the client's
 * `x-request-id` metadata (when it is 1–128 of `[A-Za-z0-9._:-]`) or a fresh UUID. Call `dispose` when the call ends.
 */
export function callScope(call: ServerSurfaceCall, identify: GrpcIdentify = callCredentials): GrpcCallScope {
  const controller = new AbortController();
  const onCancel = () => controller.abort(new PersysError("CANCELLED", "the client cancelled the call"));
  call.on("cancelled", onCancel);
  let timer: NodeJS.Timeout | undefined;
  const deadline = deadlineMs(call);
  if (deadline !== undefined) {
    const left = deadline - Date.now();
    const expire = () => controller.abort(new PersysError("DEADLINE_EXCEEDED", "the call's deadline passed"));
    if (left <= 0) expire();
    else if (left < MAX_TIMER_MS) timer = setTimeout(expire, left);
  }
  const given = call.metadata.get("x-request-id")[0];
  const ctx: CallContext = {
    signal: controller.signal,
    requestId: typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID(),
    credentials: identify(call),
  };
  return {
    ctx,
    controller,
    dispose: () => {
      if (timer) clearTimeout(timer);
      call.removeListener("cancelled", onCancel);
    },
  };
}

function deadlineMs(call: ServerSurfaceCall): number | undefined {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Default: the subject of a client certificate the TLS layer verified against the cluster CA
 * (grpc-js shows only verified ones) and the `authorization: Bearer` metadata.
 */
export function callCredentials(call: ServerSurfaceCall): CallCredentials {
  const peer = call.getAuthContext?.()?.sslPeerCertificate;
  const certificate = peer ? (certificateSubject(peer) ?? {}) : undefined;
  const token = bearerToken(call.metadata.get("authorization")[0]);
  return { ...(certificate ? { certificate } : {}), ...(token === undefined ? {} : { bearerToken: token }) };
}
