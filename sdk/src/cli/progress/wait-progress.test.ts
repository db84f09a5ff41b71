import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { api } from "../../index.js";
import { colours } from "../cli-io.js";
import { replicaLines, WaitProgress } from "./wait-progress.js";

const R = api.ReplicaState;
type ReplicaInput = NonNullable<Parameters<typeof api.ReplicaStatus.fromPartial>[0]>;
const w = (replicas: ReplicaInput[]) =>
  api.Workload.fromPartial({
    id: "web",
    replicas: replicas.length,
    status: {
      state: api.WorkloadState.WORKLOAD_STATE_PROGRESSING,
      replicas: replicas.map((r, index) => ({ index, ...r })),
    },
  });

function capture(tty: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY: tty });
  let text = "";
  stream.on("data", (d) => (text += d));
  return { stream, text: () => text };
}

const noColour = colours(
  { stdout: { isTTY: false } as never, stderr: process.stderr, stdin: process.stdin, env: {}, now: () => new Date() },
  false,
);

describe("WaitProgress", () => {
  it("prints a plain line when a replica's line changes (not a TTY)", () => {
    const out = capture(false);
    const progress = new WaitProgress(out.stream, noColour);
    progress.update(
      w([
        {
          state: R.REPLICA_STATE_PENDING,
          reason: { code: api.ErrorCode.UNSCHEDULABLE, message: "0/1 nodes", retryable: true },
        },
      ]),
    );
    progress.update(
      w([
        {
          state: R.REPLICA_STATE_PENDING,
          reason: { code: api.ErrorCode.UNSCHEDULABLE, message: "0/1 nodes", retryable: true },
        },
      ]),
    );
    progress.update(w([{ state: R.REPLICA_STATE_STARTING, nodeId: "n1" }]));
    progress.update(w([{ state: R.REPLICA_STATE_RUNNING, nodeId: "n1" }]));
    progress.finish();
    expect(out.text()).toBe(
      "web[0] pending — UNSCHEDULABLE: 0/1 nodes (retrying)\nweb[0] starting on n1\nweb[0] running on n1\n",
    );
  });

  it("redraws its lines in place on a TTY and leaves the last state", () => {
    const out = capture(true);
    const progress = new WaitProgress(out.stream, noColour);
    progress.update(
      w([
        { state: R.REPLICA_STATE_STARTING, nodeId: "n1" },
        { state: R.REPLICA_STATE_PLACED, nodeId: "n2" },
      ]),
    );
    progress.update(
      w([
        { state: R.REPLICA_STATE_RUNNING, nodeId: "n1" },
        { state: R.REPLICA_STATE_RUNNING, nodeId: "n2" },
      ]),
    );
    progress.finish();
    const text = out.text();
    expect(text).toContain("\u001b[2A");
    expect(text.endsWith("\u001b[2K  web[0] running on n1\n\u001b[2K  web[1] running on n2\n")).toBe(true);
  });

  it("shows the workload state before any replica exists", () => {
    expect(replicaLines(api.Workload.fromPartial({ id: "x" }))).toEqual(["x: submitted"]);
  });
});
