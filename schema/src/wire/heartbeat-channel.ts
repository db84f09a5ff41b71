import { type ClientDuplexStream, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import * as control from "../gen/index.persys.control.v1.js";
import * as heartbeat from "../gen/index.persys.heartbeat.v1.js";

export type HeartbeatCallback = (error: ServiceError | null, response?: control.HeartbeatResponse) => void;

export interface HeartbeatChannelOptions {
  /** How long one heartbeat may go unanswered before it fails with DEADLINE_EXCEEDED. */
  readonly timeoutMs: number;
  /** After a server answered UNIMPLEMENTED, how long to use the unary call before trying the stream again. Default 10 min. */
  readonly reprobeMs?: number;
}

interface InFlight {
  readonly request: control.HeartbeatRequest;
  readonly callback: HeartbeatCallback;
  readonly timer: NodeJS.Timeout;
}

type Stream = ClientDuplexStream<heartbeat.StreamHeartbeatsRequest, heartbeat.StreamHeartbeatsResponse>;

/**
 * One node's heartbeats to one control plane: over a `persys.heartbeat.v1` stream, opened on the
 * AgentControl client's own channel when first needed and again after it ended, or with the unary
 * `AgentControl.Heartbeat` when the server does not serve the stream (UNIMPLEMENTED: a Go scheduler
 * or an older Persys; tried again after `reprobeMs`). Either way a heartbeat's callback gets what the
 * unary call would give: the answer, or the status it failed with (NOT_FOUND: register again). The
 * server answers a stream's heartbeats in order, so answers are matched to them first come, first
 * answered; when the stream fails, every heartbeat waiting on it fails with that status.
 */
export class HeartbeatChannel {
  private readonly streams: heartbeat.HeartbeatServiceClient;
  private stream: Stream | undefined;
  /** Heartbeats sent on `stream` and not answered yet, oldest first. */
  private waiting: InFlight[] = [];
  private unaryUntil = 0;

  constructor(
    private readonly client: control.AgentControlClient,
    private readonly options: HeartbeatChannelOptions,
  ) {
    // Same channel (connection, credentials) as the AgentControl client; address and credentials here are unused.
    this.streams = new heartbeat.HeartbeatServiceClient("unused", credentials.createInsecure(), {
      channelOverride: client.getChannel(),
    });
  }

  /** Whether heartbeats go over the stream now (false: the unary call, the server has no stream). */
  get streaming(): boolean {
    return Date.now() >= this.unaryUntil;
  }

  /** Sends one heartbeat; `callback` gets its answer or failure. */
  send(request: control.HeartbeatRequest, callback: HeartbeatCallback): void {
    if (!this.streaming) {
      this.unary(request, callback);
      return;
    }
    const stream = this.stream ?? this.open();
    const timer = setTimeout(() => {
      if (this.stream !== stream) return;
      this.fail(stream, serviceError(status.DEADLINE_EXCEEDED, "heartbeat not answered in time"));
      stream.cancel();
    }, this.options.timeoutMs);
    timer.unref?.();
    this.waiting.push({ request, callback, timer });
    stream.write({ heartbeat: request });
  }

  /** Ends the stream (the session stops or moves to another server); waiting heartbeats fail CANCELLED. */
  close(): void {
    const stream = this.stream;
    if (!stream) return;
    this.fail(stream, serviceError(status.CANCELLED, "heartbeat channel closed"));
    stream.cancel();
  }

  private open(): Stream {
    const stream = this.streams.streamHeartbeats(new Metadata());
    this.stream = stream;
    stream.on("data", (message: heartbeat.StreamHeartbeatsResponse) => {
      if (this.stream !== stream) return;
      const answered = this.waiting.shift();
      if (!answered) return;
      clearTimeout(answered.timer);
      answered.callback(null, message.heartbeat ?? control.HeartbeatResponse.fromPartial({}));
    });
    stream.on("error", (error: ServiceError) => {
      if (this.stream !== stream) return;
      if (error.code !== status.UNIMPLEMENTED) {
        this.fail(stream, error);
        return;
      }
      // No stream here: these heartbeats, and the next ones for a while, go as unary calls.
      this.unaryUntil = Date.now() + (this.options.reprobeMs ?? 600_000);
      for (const w of this.detach()) this.unary(w.request, w.callback);
    });
    stream.on("end", () => {
      if (this.stream === stream) this.fail(stream, serviceError(status.UNAVAILABLE, "the heartbeat stream ended"));
    });
    return stream;
  }

  private unary(request: control.HeartbeatRequest, callback: HeartbeatCallback): void {
    this.client.heartbeat(request, new Metadata(), { deadline: Date.now() + this.options.timeoutMs }, callback);
  }

  /** Forgets `stream` and fails what waits on it. */
  private fail(stream: Stream, error: ServiceError): void {
    if (this.stream !== stream) return;
    for (const w of this.detach()) w.callback(error);
  }

  private detach(): InFlight[] {
    this.stream = undefined;
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) clearTimeout(w.timer);
    return waiting;
  }
}

/** A client-side ServiceError with `code` and `details`, as grpc-js reports a failed call. */
export function serviceError(code: status, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: new Metadata() });
}
