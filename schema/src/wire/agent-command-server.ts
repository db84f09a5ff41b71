import {
  type ServerDuplexStream,
  type ServerErrorResponse,
  type ServerUnaryCall,
  type StatusObject,
  status,
} from "@grpc/grpc-js";
import type * as agent from "../gen/index.persys.agent.v1.js";
import type * as command from "../gen/index.persys.command.v1.js";

/** gRPC metadata header naming the node an AgentService call is for (one endpoint may serve many simulated nodes). */
export const NODE_ID_HEADER = "persys-node-id";

type CommandCall = ServerDuplexStream<command.StreamCommandsRequest, command.StreamCommandsResponse>;
type Answer = (error: Partial<StatusObject> | ServerErrorResponse | null, value?: unknown) => void;

/**
 * `persys.command.v1.AgentCommandService` over an `AgentService` implementation: each command on a
 * stream is handed to the unary handler of the same name, as a call with the stream's metadata (and
 * peer) plus `persys-node-id: <command.nodeId>`, so it is checked and handled exactly as the unary
 * call; its answer, or the status it failed with, goes back with the command's id. A stream ends
 * once the caller ended its side and every command is answered. Streams stay open for as long as
 * the control plane runs, so `endAll` ends them (OK) before the server shuts down; the control
 * plane opens a new one with its next push.
 */
export class AgentCommandStreams {
  private readonly open = new Set<CommandCall>();

  constructor(private readonly service: agent.AgentServiceServer) {}

  /** The service's handlers, for `server.addService(command.AgentCommandServiceService, ...)`. */
  handlers(): command.AgentCommandServiceServer {
    return { streamCommands: (call: CommandCall) => this.serve(call) };
  }

  /** Ends every open stream (the server is going down); answers still due are dropped. */
  endAll(): void {
    for (const call of this.open) call.end();
    this.open.clear();
  }

  private serve(call: CommandCall): void {
    this.open.add(call);
    const forget = () => this.open.delete(call);
    call.on("cancelled", forget);
    call.on("error", forget);
    let unanswered = 0;
    let ended = false;
    const writable = () => !call.cancelled && !call.writableEnded;
    const settle = () => {
      if (!ended || unanswered > 0) return;
      forget();
      if (writable()) call.end();
    };
    call.on("data", (request: command.StreamCommandsRequest) => {
      const { id, command: which } = request;
      if (!which) {
        if (writable()) {
          call.write({
            id,
            result: { $case: "failure", value: { code: status.INVALID_ARGUMENT, message: "command: required" } },
          });
        }
        return;
      }
      unanswered++;
      const answer: Answer = (error, value) => {
        unanswered--;
        if (writable()) {
          call.write(
            error
              ? {
                  id,
                  result: {
                    $case: "failure",
                    value: {
                      code: error.code ?? status.UNKNOWN,
                      message: error.details ?? ("message" in error ? error.message : ""),
                    },
                  },
                }
              : ({ id, result: { $case: which.$case, value } } as command.StreamCommandsResponse),
          );
        }
        settle();
      };
      const unary = unaryCall(call, request.nodeId, which.value);
      try {
        if (which.$case === "applyWorkload") this.service.applyWorkload(unary as never, answer as never);
        else this.service.deleteWorkload(unary as never, answer as never);
      } catch (thrown) {
        answer({ code: status.INTERNAL, details: thrown instanceof Error ? thrown.message : String(thrown) });
      }
    });
    call.on("end", () => {
      ended = true;
      settle();
    });
  }
}

/** What a unary handler reads of its call, for one command of `stream`. */
function unaryCall(stream: CommandCall, nodeId: string, request: unknown): ServerUnaryCall<unknown, unknown> {
  const metadata = nodeId ? stream.metadata.clone() : stream.metadata;
  if (nodeId) metadata.set(NODE_ID_HEADER, nodeId);
  return {
    request,
    metadata,
    get cancelled() {
      return stream.cancelled;
    },
    getPeer: () => stream.getPeer(),
    getAuthContext: () => stream.getAuthContext(),
    getDeadline: () => Number.POSITIVE_INFINITY,
    getPath: () => "/persys.command.v1.AgentCommandService/StreamCommands",
    sendMetadata: () => {},
  } as unknown as ServerUnaryCall<unknown, unknown>;
}
