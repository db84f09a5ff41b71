import type { TLSSocket } from "node:tls";
import { PersysError } from "@persys/schema";
import type { FastifyReply, FastifyRequest } from "fastify";
import { bearerToken } from "../../auth/authenticator.js";
import type { CallCredentials } from "../../auth/principal.js";
import { certificateSubject } from "../../pki/principal.js";
import type { CallContext } from "../persys-api.js";

/** What a request shows of its caller (verified certificate subject, bearer token); checked later by the auth layer. */
export type RestIdentify = (request: FastifyRequest) => CallCredentials;

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
  return { signal: controller.signal, requestId: request.id, credentials: identify(request) };
}

/**
 * Default: the subject of a client certificate verified against the cluster CA (HTTPS that asked for
 * one; unverified certificates are ignored) and the `Authorization: Bearer` header.
 */
export function requestCredentials(request: FastifyRequest): CallCredentials {
  const socket = request.raw.socket as Partial<TLSSocket>;
  const token = bearerToken(request.headers.authorization);
  // Only a certificate that is there: a connection can report `authorized` with no peer certificate
  // to show (a resumed session), and must then fall back to the token, not to an empty subject.
  const peer =
    socket.authorized && typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined;
  const certificate = peer?.raw ? (certificateSubject(peer) ?? {}) : undefined;
  return { ...(certificate ? { certificate } : {}), ...(token === undefined ? {} : { bearerToken: token }) };
}
