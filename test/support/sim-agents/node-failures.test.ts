// Failure injection on a simulated node: typed apply failures and crashes, as reported on the wire.
import { agent, api, control, type ErrorCode, errorRegistry } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { assignmentRequest } from "./apply-request.js";
import { reported, useHarness } from "./node-harness.js";
import { waitUntil } from "./wait.js";

const { harness } = useHarness();

describe("failure injection", () => {
  const cases: {
    name: string;
    code: ErrorCode;
    retryable?: boolean;
    goReason: control.FailureReason;
    expectRetryable: boolean;
  }[] = [
    {
      name: "image not found (terminal)",
      code: "IMAGE_NOT_FOUND",
      goReason: control.FailureReason.IMAGE_NOT_FOUND,
      expectRetryable: false,
    },
    {
      name: "port conflict",
      code: "PORT_CONFLICT",
      goReason: control.FailureReason.RUNTIME_ERROR,
      expectRetryable: false,
    },
    {
      name: "pull failed (retryable)",
      code: "IMAGE_PULL_FAILED",
      goReason: control.FailureReason.IMAGE_PULL_FAILED,
      expectRetryable: true,
    },
    {
      name: "explicit retryable flag",
      code: "PORT_CONFLICT",
      retryable: true,
      goReason: control.FailureReason.RUNTIME_ERROR,
      expectRetryable: true,
    },
  ];

  for (const c of cases) {
    it(`failNextApply ${c.name}: FAILED with the typed reason in the Go fields and the extension`, async () => {
      const { node, caller, fake } = await harness({ startDelayMs: 10 });
      const message = `simulated ${c.code}`;
      node.failNextApply("web", { code: c.code, message, retryable: c.retryable });
      expect((await caller.apply(assignmentRequest({ workloadId: "web" }))).applied).toBe(true);
      const failed = await waitUntil(
        reported(fake, "node-a", (r) => r.workloadId === "web" && r.state === api.ReplicaState.REPLICA_STATE_FAILED),
        { timeoutMs: 1000, message: "FAILED reported" },
      );
      expect(failed.report.reason).toMatchObject({
        code: api.ErrorCode[c.code],
        message,
        retryable: c.expectRetryable,
      });
      expect(failed.goStatus).toMatchObject({
        state: "Failed",
        failureReason: c.goReason,
        message,
        reason: { code: c.code, message, retryable: c.expectRetryable },
      });
      const status = await caller.status("web-0");
      expect(status.status).toMatchObject({
        actualState: agent.ActualState.ACTUAL_STATE_FAILED,
        metadata: { failure_reason: c.code, failure_message: message, retryable: String(c.expectRetryable) },
      });
      // The node never retries by itself: still FAILED a while later.
      await new Promise((r) => setTimeout(r, 100));
      expect(node.replica("web")?.state).toBe("FAILED");
    });
  }

  it("fails only the next matching apply; a re-apply of the same revision then runs", async () => {
    const { node, caller } = await harness({ startDelayMs: 0 });
    node.failNextApply((a) => a.image === "bad:1", { code: "IMAGE_NOT_FOUND" });
    await caller.apply(assignmentRequest({ workloadId: "ok", image: "good:1" }));
    await caller.apply(assignmentRequest({ workloadId: "web", image: "bad:1" }));
    await waitUntil(() => node.replica("web")?.state === "FAILED");
    expect(node.replica("ok")?.state).toBe("RUNNING");
    expect(node.replica("web")?.reason).toMatchObject({
      code: "IMAGE_NOT_FOUND",
      message: errorRegistry.IMAGE_NOT_FOUND.summary,
    });
    const again = await caller.apply(assignmentRequest({ workloadId: "web", image: "bad:1" }));
    expect(again.skipped).toBe(false);
    await waitUntil(() => node.replica("web")?.state === "RUNNING");
  });

  it("at: apply answers applied=false right away", async () => {
    const { node, caller } = await harness();
    node.failNextApply("web", { code: "PORT_CONFLICT", message: "port 8080/tcp is in use", at: "apply" });
    const res = await caller.apply(assignmentRequest({ workloadId: "web" }));
    expect(res).toMatchObject({ applied: false, message: "port 8080/tcp is in use" });
    expect(res.status?.actualState).toBe(agent.ActualState.ACTUAL_STATE_FAILED);
  });

  it("crashReplica: FAILED exited with code 137, then RUNNING again with restart_count 1", async () => {
    const { node, caller, fake } = await harness({ startDelayMs: 0, restartDelayMs: 150 });
    await caller.apply(assignmentRequest({ workloadId: "web" }));
    await waitUntil(() => node.replica("web")?.state === "RUNNING");
    node.crashReplica("web", 0);
    const crashed = await waitUntil(
      reported(fake, "node-a", (r) => r.workloadId === "web" && r.state === api.ReplicaState.REPLICA_STATE_FAILED),
      { message: "crash reported" },
    );
    expect(crashed.report.reason).toMatchObject({
      code: api.ErrorCode.CONTAINER_EXITED,
      message: "exited with code 137",
      retryable: true,
    });
    const back = await waitUntil(
      reported(
        fake,
        "node-a",
        (r) => r.workloadId === "web" && r.state === api.ReplicaState.REPLICA_STATE_RUNNING && r.restartCount === 1,
      ),
      { message: "restart reported" },
    );
    expect(back.goStatus?.state).toBe("Running");
  });
});
