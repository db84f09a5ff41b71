import type { handleServerStreamingCall, ServerWritableStream } from "@grpc/grpc-js";
import { api, PersysError, toGrpcStatus } from "@persys/schema";
import { classifyDockerError, isNotFound } from "../runtimes/docker/docker-errors.js";
import type { DockerRuntime } from "../runtimes/docker/docker-runtime.js";
import { LogDemuxer, type LogLine } from "../runtimes/docker/log-lines.js";
import { consoleLines } from "../runtimes/vm/console-log.js";
import { checkNode } from "./agent-service.js";

export interface NodeLogServiceParts {
  readonly nodeId: string;
  readonly runtime: DockerRuntime;
  /**
   * Where a replica's output is, by its name: its container, or (VM replicas) its serial console
   * log; undefined when it is not on this node.
   */
  readonly lookup: (
    replicaName: string,
  ) => { containerId: string; index: number } | { consoleLog: string; index: number } | undefined;
}

/** Lines per message at most (a long tail arrives in several batches). */
const BATCH = 500;

type Call = ServerWritableStream<api.StreamReplicaLogsRequest, api.StreamReplicaLogsResponse>;

function toMessage(line: LogLine, index: number, nodeId: string): api.StreamWorkloadLogsResponse {
  return {
    replicaIndex: index,
    stream: line.stream === "stderr" ? api.LogStream.LOG_STREAM_STDERR : api.LogStream.LOG_STREAM_STDOUT,
    line: line.line,
    time: line.time,
    service: "",
    nodeId,
  };
}

/**
 * `persys.api.v1.NodeLogService`: one replica's container output from Docker (`follow`, `tail`,
 * `since`), demultiplexed into stdout/stderr lines with Docker's timestamps and sent in batches,
 * with backpressure (Docker's stream pauses while the caller is slow). A cancelled call stops the
 * Docker stream. NOT_FOUND when the node has no replica of that name.
 */
export function nodeLogServiceImplementation(p: NodeLogServiceParts): api.NodeLogServiceServer {
  const stream: handleServerStreamingCall<api.StreamReplicaLogsRequest, api.StreamReplicaLogsResponse> = (call) => {
    void serve(p, call).catch((error: unknown) => {
      const e =
        error instanceof PersysError ? error : classifyDockerError(error, "other", { socket: p.runtime.socket });
      if (!call.cancelled) call.emit("error", toGrpcStatus(e));
    });
  };
  return { streamReplicaLogs: stream };
}

async function serve(p: NodeLogServiceParts, call: Call): Promise<void> {
  checkNode(call.metadata, p.nodeId);
  const req = call.request;
  const target = p.lookup(req.replicaName);
  if (!target) throw new PersysError("NOT_FOUND", `replica ${req.replicaName} is not on node ${p.nodeId}`);
  const abort = new AbortController();
  call.on("cancelled", () => abort.abort());
  if ("consoleLog" in target) return serveConsole(p, call, target, abort.signal);
  const since = req.since?.getTime();
  let docker: Awaited<ReturnType<DockerRuntime["logs"]>>;
  try {
    docker = await p.runtime.logs(target.containerId, {
      follow: req.follow,
      ...(req.tailLines !== undefined ? { tail: Math.max(0, req.tailLines) } : {}),
      ...(since !== undefined ? { sinceSeconds: Math.floor(since / 1000) } : {}),
      signal: abort.signal,
    });
  } catch (error) {
    if (isNotFound(error)) throw new PersysError("NOT_FOUND", `replica ${req.replicaName} has no container yet`);
    throw error;
  }
  const demux = new LogDemuxer();
  const send = (lines: LogLine[]) => {
    const kept = since === undefined ? lines : lines.filter((l) => !l.time || l.time.getTime() >= since);
    for (let i = 0; i < kept.length; i += BATCH) {
      const batch = kept.slice(i, i + BATCH).map((l) => toMessage(l, target.index, p.nodeId));
      if (!call.write({ lines: batch })) {
        docker.pause();
        call.once("drain", () => docker.resume());
      }
    }
  };
  await new Promise<void>((resolve, reject) => {
    docker.on("data", (chunk: Buffer) => send(demux.push(chunk)));
    docker.on("end", () => resolve());
    docker.on("close", () => resolve());
    docker.on("error", (error) => (abort.signal.aborted ? resolve() : reject(error)));
  });
  if (call.cancelled) return;
  send(demux.end());
  call.end();
}

/**
 * A VM replica's serial console: its lines as stdout (the console has no timestamps, so `since`
 * does not filter), the last `tail_lines` of it, then with `follow` what the guest writes next.
 */
async function serveConsole(
  p: NodeLogServiceParts,
  call: Call,
  target: { consoleLog: string; index: number },
  signal: AbortSignal,
): Promise<void> {
  const req = call.request;
  const lines = consoleLines(target.consoleLog, {
    follow: req.follow,
    ...(req.tailLines !== undefined ? { tail: Math.max(0, req.tailLines) } : {}),
    signal,
  });
  for await (const batch of lines) {
    for (let i = 0; i < batch.length; i += BATCH) {
      const messages = batch
        .slice(i, i + BATCH)
        .map((line) => toMessage({ stream: "stdout", line }, target.index, p.nodeId));
      if (!call.write({ lines: messages })) await new Promise((resolve) => call.once("drain", resolve));
    }
  }
  if (!call.cancelled) call.end();
}
