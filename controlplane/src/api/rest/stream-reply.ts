import { once } from "node:events";
import type { ErrorBody } from "@persys/schema";
import type { FastifyReply } from "fastify";

export interface StreamReplyOptions<T> {
  /** `sse`: server-sent events (`id:`/`data:`, `event: error`, heartbeat comments); `ndjson`: one JSON per line. */
  readonly format: "sse" | "ndjson";
  /** The item's JSON form (ts-proto `toJSON`). */
  toJSON(item: T): unknown;
  /** SSE only: the event id of an item's JSON (store revision, event id), for `Last-Event-ID` resumption. */
  eventId?(json: unknown): string | undefined;
  /** Turns a failure into the error body sent as the last event (and logs it when unexpected). */
  errorBody(thrown: unknown): ErrorBody;
  /** Aborted when the client goes away; the stream then stops and the iterator is returned. */
  readonly signal: AbortSignal;
  /** SSE heartbeat comment interval (ms), so proxies keep an idle stream open. */
  readonly heartbeatMs: number;
  /**
   * How long to wait for the first item before sending the headers (ms). A stream that fails within
   * it (NOT_FOUND, COMPACTED, bad arguments) fails the request with the proper HTTP status instead of
   * a 200 followed by an error event.
   */
  readonly firstItemWaitMs: number;
}

const ABORTED = Symbol("aborted");
const PENDING = Symbol("pending");

/**
 * Sends an async iterable as a streamed response. Rejects (before anything is sent) when the stream
 * fails at once, so the route's error handler answers with a status; once the headers are out, a
 * failure becomes a final error event (`event: error` in SSE, `{"error": {...}}` in NDJSON) and the
 * response ends. Resolves when the response is over.
 */
export async function replyWithStream<T>(
  reply: FastifyReply,
  iterable: AsyncIterable<T>,
  options: StreamReplyOptions<T>,
): Promise<void> {
  const iterator = iterable[Symbol.asyncIterator]();
  const aborted = abortPromise(options.signal);
  let pending = guarded(iterator.next());
  let timer: NodeJS.Timeout | undefined;
  const wait = new Promise<typeof PENDING>((resolve) => {
    timer = setTimeout(() => resolve(PENDING), options.firstItemWaitMs);
  });
  let early: IteratorResult<T> | typeof PENDING | typeof ABORTED;
  try {
    early = await Promise.race([pending, wait, aborted]);
  } finally {
    clearTimeout(timer);
  }
  if (early === ABORTED) {
    stop(iterator);
    return;
  }
  if (early !== PENDING) pending = Promise.resolve(early);

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { ...headersOf(reply), ...streamHeaders(options.format) });
  raw.flushHeaders();
  const write = async (chunk: string) => {
    if (!raw.write(chunk)) await Promise.race([once(raw, "drain").catch(() => ABORTED), aborted]);
  };
  const heartbeat =
    options.format === "sse" ? setInterval(() => raw.write(": heartbeat\n\n"), options.heartbeatMs) : undefined;
  heartbeat?.unref();
  try {
    if (options.format === "sse") await write(": stream open\n\n");
    while (!options.signal.aborted) {
      const next = await Promise.race([pending, aborted]);
      if (next === ABORTED || next.done) break;
      await write(frame(options, next.value));
      pending = guarded(iterator.next());
    }
  } catch (thrown) {
    if (!options.signal.aborted) raw.write(errorFrame(options.format, options.errorBody(thrown)));
  } finally {
    clearInterval(heartbeat);
    stop(iterator);
    raw.end();
  }
}

function frame<T>(options: StreamReplyOptions<T>, item: T): string {
  const json = options.toJSON(item);
  const data = JSON.stringify(json);
  if (options.format === "ndjson") return `${data}\n`;
  const id = options.eventId?.(json);
  return `${id ? `id: ${id.replace(/[\r\n]/g, "")}\n` : ""}data: ${data}\n\n`;
}

function errorFrame(format: "sse" | "ndjson", body: ErrorBody): string {
  return format === "sse" ? `event: error\ndata: ${JSON.stringify(body)}\n\n` : `${JSON.stringify({ error: body })}\n`;
}

function streamHeaders(format: "sse" | "ndjson"): Record<string, string> {
  const common = { "cache-control": "no-cache", "x-accel-buffering": "no" };
  return format === "sse"
    ? { ...common, "content-type": "text/event-stream; charset=utf-8" }
    : { ...common, "content-type": "application/x-ndjson; charset=utf-8" };
}

function headersOf(reply: FastifyReply): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) out[name] = typeof value === "number" ? String(value) : value;
  }
  return out;
}

/** Keeps a rejected `next()` that lost a race from becoming an unhandled rejection. */
function guarded<R>(promise: Promise<R>): Promise<R> {
  promise.catch(() => {});
  return promise;
}

function stop(iterator: AsyncIterator<unknown>): void {
  iterator.return?.().catch(() => {});
}

function abortPromise(signal: AbortSignal): Promise<typeof ABORTED> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(ABORTED);
    else signal.addEventListener("abort", () => resolve(ABORTED), { once: true });
  });
}
