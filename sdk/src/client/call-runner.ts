import type {
  ClientReadableStream,
  ClientUnaryCall,
  CallOptions as GrpcCallOptions,
  Metadata,
  ServiceError,
} from "@grpc/grpc-js";
import { PersysError, persysErrorFromServiceError } from "@persys/schema";
import { backoffDelay, cancelledError, isRetryableCallError, type RetryPolicy, sleep } from "./retry-policy.js";

/** Options every SDK call takes. */
export interface CallOptions {
  /** Aborting cancels the call (and any wait between retries); the call rejects with CANCELLED. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Time budget of the whole call, retries included. Default: the client's `timeoutMs`.
   * When it passes the call rejects with DEADLINE_EXCEEDED.
   */
  readonly timeoutMs?: number | undefined;
}

/** A unary method of a generated grpc-js client, in its (request, metadata, options, callback) form. */
export type UnaryInvoker<Res> = (
  metadata: Metadata,
  options: Partial<GrpcCallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** A server-streaming method of a generated grpc-js client, in its (request, metadata, options) form. */
export type StreamOpener<Res> = (metadata: Metadata, options: Partial<GrpcCallOptions>) => ClientReadableStream<Res>;

/** Per-call knobs of {@link CallRunner.unary}. */
export interface UnaryCallOptions extends CallOptions {
  /** A conditional request (expected revision): CONFLICT is then final. */
  readonly conditional?: boolean;
  /** Called before each retry; for logging and tests. */
  readonly onRetry?: ((info: { attempt: number; error: PersysError; delayMs: number }) => void) | undefined;
}

/** Runs calls with the client's metadata, deadline, retries and cancellation. Internal to the SDK. */
export class CallRunner {
  /** @param settings metadata for every call (the token), the default time budget, the retry policy */
  constructor(
    private readonly settings: {
      readonly metadata: () => Metadata;
      readonly timeoutMs: number;
      readonly retry: RetryPolicy;
    },
  ) {}

  /**
   * Sends a unary call, retrying errors that are retryable (see `isRetryableCallError`) with backoff
   * while attempts and time remain. Rejects with a `PersysError` only.
   */
  async unary<Res>(invoke: UnaryInvoker<Res>, options: UnaryCallOptions = {}): Promise<Res> {
    const timeoutMs = options.timeoutMs ?? this.settings.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const { retry } = this.settings;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(invoke, deadline, options.signal);
      } catch (thrown) {
        const error = thrown instanceof PersysError ? thrown : toPersysError(thrown);
        const delayMs = backoffDelay(retry, attempt - 1);
        const retryable = isRetryableCallError(error, { conditional: options.conditional ?? false });
        if (!retryable || attempt >= retry.maxAttempts || Date.now() + delayMs >= deadline) throw error;
        options.onRetry?.({ attempt, error, delayMs });
        await sleep(delayMs, options.signal);
      }
    }
  }

  private once<Res>(invoke: UnaryInvoker<Res>, deadline: number, signal: AbortSignal | undefined): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (signal?.aborted) {
        reject(cancelledError(signal));
        return;
      }
      const onAbort = () => call.cancel();
      const call = invoke(this.settings.metadata(), { deadline: new Date(deadline) }, (error, response) => {
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) reject(cancelledError(signal));
        else if (error) reject(persysErrorFromServiceError(error));
        else resolve(response);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Opens a server stream as an async iterable. Breaking out of the loop or aborting `signal`
   * cancels the call; failures are thrown as `PersysError` (CANCELLED when the signal aborted).
   * One attempt only: resumption is the caller's business (it knows the cursor).
   */
  async *stream<Res>(open: StreamOpener<Res>, signal?: AbortSignal): AsyncGenerator<Res, void, undefined> {
    if (signal?.aborted) throw cancelledError(signal);
    const call = open(this.settings.metadata(), {});
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for await (const item of call as AsyncIterable<Res>) yield item;
    } catch (thrown) {
      if (signal?.aborted) throw cancelledError(signal);
      throw toPersysError(thrown);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      call.cancel();
    }
  }
}

/** Any failure of a call as a PersysError (grpc-js ServiceErrors decoded with their trailer). */
export function toPersysError(thrown: unknown): PersysError {
  if (thrown instanceof PersysError) return thrown;
  if (isServiceError(thrown)) return persysErrorFromServiceError(thrown);
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new PersysError("INTERNAL", `client error: ${message}`, { cause: thrown });
}

function isServiceError(value: unknown): value is ServiceError {
  return value instanceof Error && typeof (value as Partial<ServiceError>).code === "number" && "metadata" in value;
}
