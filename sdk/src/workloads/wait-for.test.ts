import { api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { WaitError } from "../errors/wait-error.js";
import { describeProgress, terminalFailure, type WaitDeps, waitForWorkload } from "./wait-for.js";
import type { WorkloadWatchEvent } from "./workload-watch.js";

const S = api.WorkloadState;
const R = api.ReplicaState;
type ReplicaInput = NonNullable<Parameters<typeof api.ReplicaStatus.fromPartial>[0]>;

function workload(state: api.WorkloadState, replicas: ReplicaInput[] = []): api.Workload {
  return api.Workload.fromPartial({
    id: "web",
    replicas: replicas.length || 1,
    status: {
      state,
      readyReplicas: replicas.filter((r) => r.state === R.REPLICA_STATE_RUNNING).length,
      replicas: replicas.map((r, index) => ({ index, ...r })),
    },
  });
}

/** Deps whose watch yields `events` (then idles until aborted); `find` returns `initial`. */
function deps(initial: api.Workload | undefined, events: WorkloadWatchEvent[]): WaitDeps & { explained: number } {
  const d = {
    explained: 0,
    find: async () => initial,
    async *watch(o: { signal?: AbortSignal }) {
      for (const e of events) {
        await new Promise((r) => setTimeout(r, 5));
        yield e;
      }
      await new Promise<void>((resolve) => o.signal?.addEventListener("abort", () => resolve()));
    },
    explain: async () => {
      d.explained++;
      return api.ExplainWorkloadResponse.fromPartial({ workloadId: "web", revision: "r1" });
    },
  };
  return d;
}

const modified = (w: api.Workload): WorkloadWatchEvent => ({ type: "modified", workload: w, storeRevision: 1 });

describe("waitForWorkload", () => {
  it("resolves with the workload once it reaches the state, reporting progress", async () => {
    const seen: number[] = [];
    const running = workload(S.WORKLOAD_STATE_RUNNING, [{ state: R.REPLICA_STATE_RUNNING }]);
    const got = await waitForWorkload(
      deps(workload(S.WORKLOAD_STATE_PENDING), [modified(workload(S.WORKLOAD_STATE_PROGRESSING)), modified(running)]),
      "web",
      "running",
      {
        onProgress: (w) => seen.push(w.status!.state),
      },
    );
    expect(got).toBe(running);
    expect(seen).toEqual([S.WORKLOAD_STATE_PENDING, S.WORKLOAD_STATE_PROGRESSING, S.WORKLOAD_STATE_RUNNING]);
  });

  it("times out with a WaitError carrying the last status and the explanation", async () => {
    const pending = workload(S.WORKLOAD_STATE_PENDING, [
      {
        state: R.REPLICA_STATE_PENDING,
        reason: { code: api.ErrorCode.UNSCHEDULABLE, message: "0/1 nodes are available", retryable: true, attempts: 1 },
      },
    ]);
    const d = deps(pending, []);
    const error = (await waitForWorkload(d, "web", "running", { timeoutMs: 50 }).catch((e) => e)) as WaitError;
    expect(error).toBeInstanceOf(WaitError);
    expect(error).toBeInstanceOf(PersysError);
    expect([error.outcome, error.code, error.retryable]).toEqual(["timeout", "DEADLINE_EXCEEDED", true]);
    expect(error.message).toBe(
      "workload web is not running after 0.1s: state pending, 0/1 ready; replica 0 pending: 0/1 nodes are available",
    );
    expect(error.lastStatus?.state).toBe(S.WORKLOAD_STATE_PENDING);
    expect(error.explanation?.revision).toBe("r1");
  });

  it("fails fast on a replica failure Persys will not retry", async () => {
    const failed = workload(S.WORKLOAD_STATE_FAILED, [
      {
        state: R.REPLICA_STATE_FAILED,
        reason: { code: api.ErrorCode.IMAGE_NOT_FOUND, message: "nginx:nope not found", retryable: false },
      },
    ]);
    const error = (await waitForWorkload(
      deps(workload(S.WORKLOAD_STATE_PENDING), [modified(failed)]),
      "web",
      "running",
    ).catch((e) => e)) as WaitError;
    expect([error.outcome, error.code]).toEqual(["failed", "IMAGE_NOT_FOUND"]);
    expect(error.message).toContain("replica 0 failed: nginx:nope not found");
  });

  it("keeps waiting through retryable failures unless failFast", async () => {
    const crashed = workload(S.WORKLOAD_STATE_FAILED, [
      {
        state: R.REPLICA_STATE_FAILED,
        reason: { code: api.ErrorCode.CONTAINER_EXITED, message: "exit 1", retryable: true },
      },
    ]);
    const running = workload(S.WORKLOAD_STATE_RUNNING, [{ state: R.REPLICA_STATE_RUNNING }]);
    await expect(waitForWorkload(deps(crashed, [modified(running)]), "web", "running")).resolves.toBe(running);
    const error = await waitForWorkload(deps(crashed, []), "web", "running", { failFast: true }).catch((e) => e);
    expect(error).toMatchObject({ outcome: "failed", code: "CONTAINER_EXITED" });
  });

  it.each([
    { name: "waiting for deleted: resolves when the workload goes", target: "deleted" as const, outcome: undefined },
    { name: "waiting for running: a deletion is a WaitError", target: "running" as const, outcome: "deleted" },
  ])("$name", async ({ target, outcome }) => {
    const d = deps(workload(S.WORKLOAD_STATE_DELETING), [
      { type: "deleted", workload: workload(S.WORKLOAD_STATE_DELETING), storeRevision: 2 },
    ]);
    const result = await waitForWorkload(d, "web", target).catch((e) => e);
    if (outcome) expect(result).toMatchObject({ outcome, code: "NOT_FOUND" });
    else expect(result).toBeUndefined();
  });

  it.each([
    { target: "deleted" as const, outcome: undefined },
    { target: "running" as const, outcome: "deleted" },
  ])(
    "sees a deletion that happened between the first read and the watch (waiting for $target)",
    async ({ target, outcome }) => {
      // The first read finds it; by the time the watch opens it is gone, so the watch shows nothing.
      let reads = 0;
      const d = deps(workload(S.WORKLOAD_STATE_DELETING), []);
      d.find = async () => (reads++ === 0 ? workload(S.WORKLOAD_STATE_DELETING) : undefined);
      const started = Date.now();
      const result = await waitForWorkload(d, "web", target, { timeoutMs: 10_000 }).catch((e) => e);
      if (outcome) expect(result).toMatchObject({ outcome, code: "NOT_FOUND" });
      else expect(result).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(5_000);
    },
  );

  it("rejects with NOT_FOUND for a workload that does not exist, unless waiting for deleted", async () => {
    await expect(waitForWorkload(deps(undefined, []), "web", "running")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(waitForWorkload(deps(undefined, []), "web", "deleted")).resolves.toBeUndefined();
  });

  it("rejects with CANCELLED when the caller aborts", async () => {
    const controller = new AbortController();
    const waiting = waitForWorkload(deps(workload(S.WORKLOAD_STATE_PENDING), []), "web", "running", {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    const error = await waiting.catch((e) => e);
    expect(error).not.toBeInstanceOf(WaitError);
    expect(error).toMatchObject({ code: "CANCELLED" });
  });

  it("accepts a predicate and an enum value as the target", async () => {
    const stopped = workload(S.WORKLOAD_STATE_STOPPED);
    await expect(waitForWorkload(deps(stopped, []), "web", S.WORKLOAD_STATE_STOPPED)).resolves.toBe(stopped);
    await expect(
      waitForWorkload(deps(stopped, []), "web", (w) => w.status?.state === S.WORKLOAD_STATE_STOPPED),
    ).resolves.toBe(stopped);
    await expect(waitForWorkload(deps(stopped, []), "web", "sleeping" as "running")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});

describe("terminalFailure and describeProgress", () => {
  it("names the first failed replica that will not be retried", () => {
    const w = workload(S.WORKLOAD_STATE_DEGRADED, [
      { state: R.REPLICA_STATE_RUNNING },
      {
        state: R.REPLICA_STATE_FAILED,
        reason: { code: api.ErrorCode.PORT_CONFLICT, message: "port 80 taken", retryable: false },
      },
    ]);
    expect(terminalFailure(w, false)).toMatchObject({ code: "PORT_CONFLICT", replica: { index: 1 } });
    expect(describeProgress(w)).toBe("state degraded, 1/2 ready; replica 1 failed: port 80 taken");
    expect(describeProgress(undefined)).toBe("no status yet");
  });
});

describe("WaitError", () => {
  it("is recognised across copies of the SDK and is a PersysError", () => {
    const foreign = Object.defineProperty(new Error("x"), Symbol.for("persys.sdk.wait-error"), { value: true });
    expect(foreign).toBeInstanceOf(WaitError);
    expect(new PersysError("INTERNAL", "x")).not.toBeInstanceOf(WaitError);
    expect(new WaitError("failed", "IMAGE_NOT_FOUND", "x", { target: "running" })).toBeInstanceOf(PersysError);
  });
});
