import type { TLSSocket } from "node:tls";
import { PersysError } from "@persys/schema";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { CallContext } from "../persys-api.js";

/** Derives the caller's identity from a request; `undefined` when unauthenticated. */
export type RestIdentify = (request: FastifyRequest) => string | undefined;

/**
 * A CallContext for one HTTP request: its signal aborts (reason CANCELLED) when the client goes
 * away before the response is complete, which is how a watch or a followed log stream ends, and
 * (reason UNAVAILABLE) when `shutdown` aborts, so open streams end when the server closes.
 */
export function restContext(
  request: FastifyRequest,
  reply: FastifyReply,
  identify: RestIdentify,
  shutdown?: AbortSignal,
): CallContext {
  const controller = new AbortController();
  const onShutdown = () => controller.abort(new PersysError("UNAVAILABLE", "the server is shutting down"));
  if (shutdown?.aborted) onShutdown();
  else shutdown?.addEventListener("abort", onShutdown, { once: true });
  reply.raw.once("close", () => {
    shutdown?.removeEventListener("abort", onShutdown);
    if (!reply.raw.writableFinished) controller.abort(new PersysError("CANCELLED", "the client went away"));
  });
  const identity = identify(request);
  return {
    signal: controller.signal,
    requestId: request.id,
    ...(identity === undefined ? {} : { identity }),
  };
}

/** Default identity: the common name of a verified TLS client certificate (HTTPS with client auth). */
export function certificateIdentity(request: FastifyRequest): string | undefined {
  const socket = request.raw.socket as Partial<TLSSocket>;
  if (!socket.authorized || typeof socket.getPeerCertificate !== "function") return undefined;
  const cn = socket.getPeerCertificate().subject?.CN;
  return typeof cn === "string" && cn ? cn : undefined;
}
