import { type ClientDuplexStream, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { type agent, command, serviceError } from "@persys/schema";

/** A command for the stream, as its oneof. */
export type AgentCommand = NonNullable<command.StreamCommandsRequest["command"]>;
/** What a command is answered with: the unary call's response of the same case. */
export type AgentCommandResult = Exclude<NonNullable<command.StreamCommandsResponse["result"]>, { $case: "failure" }>;
export type CommandCallback = (error: ServiceError | null, result?: AgentCommandResult["value"]) => void;
/** Sends one command as its unary AgentService call (where the stream is not served). */
export type UnaryCommand = (nodeId: string, cmd: AgentCommand, timeoutMs: number, callback: CommandCallback) => void;

interface InFlight {
  readonly nodeId: string;
  readonly command: AgentCommand;
  readonly timeoutMs: number;
  readonly deadline: number;
  readonly callback: CommandCallback;
}

type Stream = ClientDuplexStream<command.StreamCommandsRequest, command.StreamCommandsResponse>;

/**
 * Pushes to one agent endpoint over a `persys.command.v1` stream, opened on the AgentService
 * client's own channel when first needed and again after it ended, or as unary AgentService calls
 * when the agent does not serve the stream (UNIMPLEMENTED: a Go compute-agent or an older Persys
 * agent; tried again after `reprobeMs`). Either way a command's callback gets what the unary call
 * would give. Answers are matched by id. A command unanswered past its deadline means the stream is
 * stuck: it is cancelled and every command waiting on it fails DEADLINE_EXCEEDED (pushes are
 * idempotent; the reconciler sends them again).
 */
export class AgentCommandChannel {
  private readonly streams: command.AgentCommandServiceClient;
  private stream: Stream | undefined;
  private readonly waiting = new Map<number, InFlight>();
  private nextId = 1;
  private unaryUntil = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    client: agent.AgentServiceClient,
    private readonly unary: UnaryCommand,
    private readonly options: { readonly reprobeMs?: number } = {},
  ) {
    // Same channel (connection, credentials) as the AgentService client; address and credentials here are unused.
    this.streams = new command.AgentCommandServiceClient("unused", credentials.createInsecure(), {
      channelOverride: client.getChannel(),
    });
  }

  /** Whether commands go over the stream now (false: unary calls, the agent has no stream). */
  get streaming(): boolean {
    return Date.now() >= this.unaryUntil;
  }

  send(nodeId: string, cmd: AgentCommand, timeoutMs: number, callback: CommandCallback): void {
    if (!this.streaming) {
      this.unary(nodeId, cmd, timeoutMs, callback);
      return;
    }
    const stream = this.stream ?? this.open();
    const id = this.nextId++;
    this.waiting.set(id, { nodeId, command: cmd, timeoutMs, deadline: Date.now() + timeoutMs, callback });
    this.sweeper ??= setInterval(() => this.sweep(), Math.min(1_000, timeoutMs)).unref();
    stream.write({ id, nodeId, command: cmd });
  }

  /** Ends the stream; waiting commands fail CANCELLED. */
  close(): void {
    const stream = this.stream;
    if (!stream) return;
    this.fail(stream, serviceError(status.CANCELLED, "agent command channel closed"));
    stream.cancel();
  }

  private open(): Stream {
    const stream = this.streams.streamCommands(new Metadata());
    this.stream = stream;
    stream.on("data", (message: command.StreamCommandsResponse) => {
      const w = this.waiting.get(message.id);
      if (this.stream !== stream || !w) return;
      this.waiting.delete(message.id);
      const result = message.result;
      if (!result) w.callback(serviceError(status.INTERNAL, `command ${message.id} answered without a result`));
      else if (result.$case === "failure") w.callback(serviceError(result.value.code, result.value.message));
      else w.callback(null, result.value);
    });
    stream.on("error", (error: ServiceError) => {
      if (this.stream !== stream) return;
      if (error.code !== status.UNIMPLEMENTED) {
        this.fail(stream, error);
        return;
      }
      // No stream here (nothing it carried was run): these commands, and the next ones for a while, go unary.
      this.unaryUntil = Date.now() + (this.options.reprobeMs ?? 600_000);
      for (const w of this.detach()) this.unary(w.nodeId, w.command, w.timeoutMs, w.callback);
    });
    stream.on("end", () => {
      if (this.stream === stream)
        this.fail(stream, serviceError(status.UNAVAILABLE, "the agent's command stream ended"));
    });
    return stream;
  }

  private sweep(): void {
    const stream = this.stream;
    const now = Date.now();
    if (!stream || this.waiting.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    for (const w of this.waiting.values()) {
      if (w.deadline > now) continue;
      this.fail(stream, serviceError(status.DEADLINE_EXCEEDED, "the agent did not answer in time"));
      stream.cancel();
      return;
    }
  }

  /** Forgets `stream` and fails what waits on it. */
  private fail(stream: Stream, error: ServiceError): void {
    if (this.stream !== stream) return;
    for (const w of this.detach()) w.callback(error);
  }

  private detach(): InFlight[] {
    this.stream = undefined;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    return waiting;
  }
}
