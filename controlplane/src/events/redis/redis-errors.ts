import { PersysError } from "@persys/schema";

/** Redis replies that mean "not now" rather than "never": the server is loading, busy or failing over. */
const transientReplies = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|READONLY|CLUSTERDOWN)\b/;

/** Whether an error came from the server (a reply) rather than from the connection. */
function isReply(error: Error): boolean {
  return error.name === "ReplyError";
}

/** What ioredis and the socket say when a connection fails. */
const connectionFailures =
  /Connection is closed|isn't writeable|Socket timeout|timed out|max retries per request|ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/i;

/**
 * True when `error` means the command may succeed later unchanged: a connection-level failure from
 * ioredis (closed, not writeable, socket timeout, retries exhausted) or a transient reply.
 */
export function isTransientRedisError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isReply(error)) return transientReplies.test(error.message);
  if (error.name === "MaxRetriesPerRequestError") return true;
  const code = (error as { code?: unknown }).code;
  return (typeof code === "string" && code.startsWith("E")) || connectionFailures.test(error.message);
}

/** The typed error for a failed Redis command: `UNAVAILABLE` when transient, else `STORAGE_ERROR`. */
export function redisCommandError(error: unknown, what: string, outage: string): PersysError {
  const message = error instanceof Error ? error.message : String(error);
  if (isTransientRedisError(error))
    return new PersysError("UNAVAILABLE", `event store ${what} failed: ${outage || message}`, { cause: error });
  return new PersysError("STORAGE_ERROR", `event store ${what} failed: Redis replied ${message}`, { cause: error });
}
