import { type ServerDuplexStream, status } from "@grpc/grpc-js";
import { control, type heartbeat } from "@persys/schema";
import type { AgentControlApi } from "../persys-api.js";
import { callScope, type ServerSurfaceCall } from "./call-context.js";
import { failureStatus, type HandlerDeps, observeCall } from "./grpc-handlers.js";

type HeartbeatCall = ServerDuplexStream<heartbeat.StreamHeartbeatsRequest, heartbeat.StreamHeartbeatsResponse>;

const labels = { service: "persys.heartbeat.v1.HeartbeatService", name: "StreamHeartbeats" };

/**
 * `persys.heartbeat.v1.HeartbeatService`: each heartbeat on a stream goes to `AgentControl.heartbeat`
 * (so it is authorized and handled exactly as the unary call), one at a time and answered in order;
 * the first one that fails ends the stream with its status. Metrics count heartbeats, not streams.
 * Streams stay open for as long as agents run, so `endAll` ends them (OK) before the server shuts
 * down: agents reopen theirs on their next beat, to this server or the next.
 */
export class HeartbeatStreams {
  private readonly open = new Set<HeartbeatCall>();

  constructor(
    private readonly agentControl: AgentControlApi,
    private readonly deps: HandlerDeps,
  ) {}

  /** The service's handlers, for `server.addService(heartbeat.HeartbeatServiceService, ...)`. */
  handlers(): heartbeat.HeartbeatServiceServer {
    return { streamHeartbeats: (call: HeartbeatCall) => this.serve(call) };
  }

  /** Ends every open stream (the server is going down). */
  endAll(): void {
    for (const call of this.open) call.end();
    this.open.clear();
  }

  private serve(call: HeartbeatCall): void {
    // A duplex call has everything callScope reads (its `on` returns a duplex, not a unary call).
    const scope = callScope(call as unknown as ServerSurfaceCall, this.deps.identify);
    this.open.add(call);
    let chain = Promise.resolve();
    let failed = false;
    const finish = () => {
      this.open.delete(call);
      scope.dispose();
    };
    call.on("data", (message: heartbeat.StreamHeartbeatsRequest) => {
      chain = chain.then(async () => {
        if (failed || call.cancelled) return;
        const started = process.hrtime.bigint();
        try {
          const response = await this.agentControl.heartbeat(
            message.heartbeat ?? control.HeartbeatRequest.fromPartial({}),
            scope.ctx,
          );
          observeCall(this.deps, labels, "bidi_stream", status.OK, started);
          call.write({ heartbeat: response });
        } catch (thrown) {
          failed = true;
          const failure = failureStatus(thrown, scope.ctx, labels, this.deps);
          observeCall(this.deps, labels, "bidi_stream", failure.code, started);
          finish();
          if (!call.cancelled) call.emit("error", failure);
        }
      });
    });
    call.on("end", () => {
      void chain.then(() => {
        if (failed) return;
        finish();
        if (!call.cancelled) call.end();
      });
    });
    call.on("cancelled", finish);
    call.on("error", finish);
  }
}
