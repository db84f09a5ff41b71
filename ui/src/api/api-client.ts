import { SseParser } from "./sse-parser.js";
import type { ErrorBodyJson } from "./wire-types.js";

/**
 * A failed API call: the HTTP status and the API's error body. `status` 0 means the request never got
 * an answer (network down, server gone).
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly body: ErrorBodyJson,
  ) {
    super(body.message ?? `HTTP ${status}`);
  }

  /** The code of the error body (`NOT_FOUND`, `PERMISSION_DENIED`, ...), or `HTTP_<status>`. */
  get code(): string {
    return this.body.code ?? `HTTP_${this.status}`;
  }

  /** 401: no token, or the token is not valid (sign in again). */
  get unauthenticated(): boolean {
    return this.status === 401;
  }

  /** Survives two copies of this module (tests, bundles): a duck-typed `instanceof`. */
  static is(value: unknown): value is ApiError {
    return value instanceof Error && value.name === "ApiError" && typeof (value as ApiError).status === "number";
  }
}

export interface ApiClientOptions {
  /** Origin of the API ("" for the page's own origin). */
  readonly baseUrl?: string;
  /** The bearer token, read on every call (sign-in may change it). Undefined: no header. */
  readonly token?: () => string | undefined;
  /** Called on every 401 (the console then shows the sign-in page). */
  readonly onUnauthenticated?: (error: ApiError) => void;
  readonly fetch?: typeof fetch;
}

export interface StreamOptions<T> {
  readonly signal: AbortSignal;
  /** Each event's `data`, parsed as JSON. */
  onData(item: T, id: string | undefined): void;
  /** The stream ended with an `event: error` (the error body) or failed; it is not reconnected after a 4xx. */
  onError?(error: ApiError): void;
  /** Called after every (re)connection is open. */
  onOpen?(): void;
  /** Reconnect after the stream ends or drops (with `Last-Event-ID`). Default true. */
  readonly reconnect?: boolean;
  /** Extra request headers (e.g. `Accept`). */
  readonly headers?: Record<string, string>;
}

/**
 * The REST client of the console: JSON over fetch with `Authorization: Bearer <token>`, and
 * server-sent event streams read with fetch and a stream parser (EventSource cannot send headers).
 */
export class ApiClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ApiClientOptions = {}) {
    this.baseUrl = options.baseUrl ?? "";
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** GET a JSON resource. @throws ApiError */
  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>("GET", path, undefined, signal);
  }

  /** Sends `body` as JSON (or nothing) and returns the JSON answer. @throws ApiError */
  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json", ...this.authHeader() };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (thrown) {
      if (signal?.aborted) throw thrown;
      throw new ApiError(0, {
        code: "UNAVAILABLE",
        message: `The API did not answer: ${String(thrown)}`,
        retryable: true,
      });
    }
    const text = await response.text();
    const json = parseJson(text);
    if (!response.ok) throw this.failed(response.status, json, text);
    return json as T;
  }

  /**
   * Reads a server-sent event stream until `signal` aborts, reconnecting after drops with
   * `Last-Event-ID` (1 s, then up to 10 s apart). Resolves when the stream is over for good.
   */
  async stream<T>(path: string, options: StreamOptions<T>): Promise<void> {
    let lastId: string | undefined;
    let delay = 1000;
    while (!options.signal.aborted) {
      const parser = new SseParser();
      try {
        const response = await this.fetchImpl(this.baseUrl + path, {
          headers: {
            accept: "text/event-stream",
            ...this.authHeader(),
            ...options.headers,
            ...(lastId ? { "last-event-id": lastId } : {}),
          },
          signal: options.signal,
        });
        if (!response.ok || !response.body) {
          const text = await response.text();
          const error = this.failed(response.status, parseJson(text), text);
          options.onError?.(error);
          if (response.status >= 400 && response.status < 500) return;
        } else {
          options.onOpen?.();
          delay = 1000;
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            for (const event of parser.push(decoder.decode(value, { stream: true }))) {
              if (event.event === "error") {
                options.onError?.(new ApiError(200, (parseJson(event.data) ?? {}) as ErrorBodyJson));
                continue;
              }
              const item = parseJson(event.data);
              if (item !== undefined) options.onData(item as T, event.id);
            }
            lastId = parser.lastEventId ?? lastId;
          }
        }
      } catch (thrown) {
        if (options.signal.aborted) return;
        options.onError?.(new ApiError(0, { code: "UNAVAILABLE", message: String(thrown), retryable: true }));
      }
      if (options.reconnect === false) return;
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 10_000);
    }
  }

  private authHeader(): Record<string, string> {
    const token = this.options.token?.();
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  private failed(status: number, json: unknown, text: string): ApiError {
    const body: ErrorBodyJson =
      json && typeof json === "object" && "message" in json
        ? (json as ErrorBodyJson)
        : { code: `HTTP_${status}`, message: text.trim().slice(0, 300) || `HTTP ${status}` };
    const error = new ApiError(status, body);
    if (status === 401) this.options.onUnauthenticated?.(error);
    return error;
  }
}

/** A query string from defined, non-empty values (`?a=1&b=x`), or "" when there are none. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
