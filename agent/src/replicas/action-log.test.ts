import { describe, expect, it } from "vitest";
import { ActionLog } from "./action-log.js";

describe("ActionLog", () => {
  it("records actions with their outcome and filters them like ListActions", () => {
    let now = 10_000;
    const log = new ActionLog(3, () => now);
    const a = log.begin("apply", "web-0");
    a.start();
    now += 2000;
    a.done();
    log.begin("apply", "db-0").done("image db:1 is not on this node");
    log.begin("delete", "web-0");
    expect(log.list({ workloadId: "web-0", actionType: "", status: "", limit: 0, newestFirst: false })).toMatchObject([
      { workloadId: "web-0", actionType: "apply", status: "succeeded", createdAt: 10, startedAt: 10, endedAt: 12 },
      { workloadId: "web-0", actionType: "delete", status: "pending" },
    ]);
    expect(log.list({ workloadId: "", actionType: "", status: "failed", limit: 0, newestFirst: false })).toMatchObject([
      { workloadId: "db-0", error: "image db:1 is not on this node" },
    ]);
    expect(log.list({ workloadId: "", actionType: "", status: "", limit: 1, newestFirst: true })).toMatchObject([
      { actionType: "delete" },
    ]);
    log.begin("gc", "ghost-0");
    expect(
      log.list({ workloadId: "", actionType: "", status: "", limit: 0, newestFirst: false }).map((x) => x.workloadId),
    ).toEqual(["db-0", "web-0", "ghost-0"]);
    expect(log.count("apply")).toBe(1);
  });
});
