import { once } from "node:events";
import {
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type StatusObject,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import { grpcStatusName, toGrpcStatus } from "../errors/grpc-error.js";
import { classifyError } from "../errors/wire-error.js";
import type { ApiMetrics } from "../metrics.js";
import type { CallContext } from "../persys-api.js";
import { callScope, type GrpcIdentify } from "./call-context.js";

/** What every handler needs besides the core: logging, metrics, identity. */
export interface HandlerDeps {
  readonly logger?: Logger;
  readonly metrics?: ApiMetrics;
  readonly identify?: GrpcIdentify;
}

/** A core method as the binder sees it: request in, a promise (unary) or an async iterable (stream) out. */
type CoreMethod = (request: never, ctx: CallContext) => unknown;

/** A core object that has a method for every RPC of the service definition `D` but those in `Skip`. */
export type Implements<D extends ServiceDefinition, Skip extends keyof D = never> = {
  readonly [K in Exclude<keyof D, Skip>]: CoreMethod;
};

/**
 * grpc-js handlers for every RPC of `definition`, each calling the same-named method of `core`
 * (bound to `core`). Unary RPCs await the promise; server-streaming RPCs iterate the async iterable,
 * honouring back-pressure, and stop it (calling `return()`) when the client cancels or the deadline
 * passes. Methods named in `skip` are left out (the caller provides them). Failures become gRPC
 * statuses with the `persys-error-bin` trailer; unexpected ones are logged and sent as INTERNAL.
 *
 * @throws Error at bind time for client-streaming RPCs, which no core method can serve.
 */
export function bindService<D extends ServiceDefinition, Skip extends keyof D = never>(
  definition: D,
  core: Implements<D, Skip>,
  deps: HandlerDeps,
  skip: readonly Skip[] = [],
): UntypedServiceImplementation {
  const handlers: UntypedServiceImplementation = {};
  for (const [key, method] of Object.entries(definition)) {
    if ((skip as readonly string[]).includes(key)) continue;
    const [service = "", name = key] = method.path.replace(/^\//, "").split("/");
    const target = (core as unknown as Record<string, CoreMethod>)[key];
    if (typeof target !== "function") throw new Error(`the core has no method ${key} for ${method.path}`);
    const invoke = (request: unknown, ctx: CallContext) =>
      (target as (r: unknown, c: CallContext) => unknown).call(core, request, ctx);
    const labels = { service, name };
    if (method.requestStream) throw new Error(`${method.path}: client-streaming RPCs are not bound generically`);
    handlers[key] = method.responseStream ? streamHandler(invoke, labels, deps) : unaryHandler(invoke, labels, deps);
  }
  return handlers;
}

export interface MethodLabels {
  readonly service: string;
  readonly name: string;
}

type Invoke = (request: unknown, ctx: CallContext) => unknown;

function unaryHandler(invoke: Invoke, labels: MethodLabels, deps: HandlerDeps): handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const started = process.hrtime.bigint();
    const scope = callScope(call, deps.identify);
    Promise.resolve()
      .then(() => invoke(call.request, scope.ctx))
      .then((response) => {
        if (response === undefined || response === null) throw new Error(`${labels.name} returned no response`);
        return response;
      })
      .then(
        (response) => {
          scope.dispose();
          observeCall(deps, labels, "unary", status.OK, started);
          callback(null, response);
        },
        (thrown: unknown) => {
          scope.dispose();
          const failure = failureStatus(thrown, scope.ctx, labels, deps);
          observeCall(deps, labels, "unary", failure.code, started);
          callback(failure);
        },
      );
  };
}

function streamHandler(
  invoke: Invoke,
  labels: MethodLabels,
  deps: HandlerDeps,
): handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const started = process.hrtime.bigint();
    const scope = callScope(call, deps.identify);
    pump(call, invoke, scope.ctx).then(
      () => {
        scope.dispose();
        if (scope.ctx.signal.aborted) {
          // Cancelled by the client (nobody is listening) or past the deadline: end with that status.
          const failure = failureStatus(scope.ctx.signal.reason, scope.ctx, labels, deps);
          observeCall(deps, labels, "server_stream", failure.code, started);
          if (!call.cancelled) call.emit("error", failure);
          return;
        }
        observeCall(deps, labels, "server_stream", status.OK, started);
        if (!call.cancelled) call.end();
      },
      (thrown: unknown) => {
        scope.dispose();
        const failure = failureStatus(thrown, scope.ctx, labels, deps);
        observeCall(deps, labels, "server_stream", failure.code, started);
        if (!call.cancelled) call.emit("error", failure);
      },
    );
  };
}

/** Writes every item of the core's stream to the call until it ends, fails or the call is aborted. */
async function pump(call: ServerWritableStream<unknown, unknown>, invoke: Invoke, ctx: CallContext): Promise<void> {
  const iterable = invoke(call.request, ctx) as AsyncIterable<unknown>;
  const iterator = iterable[Symbol.asyncIterator]();
  const aborted = abortPromise(ctx.signal);
  try {
    while (!ctx.signal.aborted) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === ABORTED || next.done) return;
      if (!call.write(next.value)) {
        await Promise.race([once(call, "drain"), aborted]);
      }
    }
  } finally {
    // Stops a generator parked at an await; does not wait for it (it may be stuck in the core).
    iterator.return?.().catch(() => {});
  }
}

const ABORTED = Symbol("aborted");

function abortPromise(signal: AbortSignal): Promise<typeof ABORTED> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(ABORTED);
    else signal.addEventListener("abort", () => resolve(ABORTED), { once: true });
  });
}

/** The gRPC status for a handler failure; unexpected failures are logged (and sent as INTERNAL). */
export function failureStatus(
  thrown: unknown,
  ctx: CallContext,
  labels: MethodLabels,
  deps: HandlerDeps,
): StatusObject {
  const { error, unexpected } = classifyError(thrown, ctx.requestId);
  if (unexpected) {
    deps.logger?.error(
      { err: thrown, requestId: ctx.requestId, grpcMethod: `${labels.service}/${labels.name}` },
      "gRPC handler failed unexpectedly",
    );
  }
  return toGrpcStatus(error);
}

/** Counts one call (or one message of a stream) in the gRPC metrics. */
export function observeCall(
  deps: HandlerDeps,
  labels: MethodLabels,
  type: "unary" | "server_stream" | "bidi_stream",
  code: number,
  started: bigint,
): void {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  deps.metrics?.observeGrpc(labels.service, labels.name, type, grpcStatusName(code), seconds);
}
