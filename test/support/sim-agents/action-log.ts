/**
 * A bounded in-memory log of the apply/delete tasks a simulated agent ran, served by ListActions.
 * Unlike the Go agent (which never evicts), the oldest entries go once the log is full.
 */
import type { agent } from "@persys/schema";

/** Action types, as the Go agent names its tasks. */
export type ActionType = "apply_workload" | "delete_workload";

/** Task outcomes: `completed`, `skipped` (already at that revision and state) or `failed`. */
export type ActionStatus = "completed" | "skipped" | "failed";

/** Recent actions, at most `capacity` of them. */
export class ActionLog {
  private readonly entries: agent.AgentAction[] = [];
  private seq = 0;

  constructor(private readonly capacity = 256) {}

  /** Records one finished task. Task ids follow the Go agent: `apply-<id>-<unixnano>`. */
  record(type: ActionType, workloadId: string, status: ActionStatus, error = ""): agent.AgentAction {
    const nowMs = Date.now();
    const unix = Math.floor(nowMs / 1000);
    const nanos = BigInt(nowMs) * 1_000_000n + BigInt(++this.seq % 1_000_000);
    const action: agent.AgentAction = {
      taskId: `${type === "apply_workload" ? "apply" : "delete"}-${workloadId}-${nanos}`,
      workloadId,
      actionType: type,
      status,
      error,
      createdAt: unix,
      startedAt: unix,
      endedAt: unix,
    };
    this.entries.push(action);
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
    return action;
  }

  /** The actions matching a ListActions request (empty filters match all; limit 0 means no limit). */
  list(req: Partial<agent.ListActionsRequest> = {}): agent.AgentAction[] {
    let out = this.entries.filter(
      (a) =>
        (!req.workloadId || a.workloadId === req.workloadId) &&
        (!req.actionType || a.actionType === req.actionType) &&
        (!req.status || a.status === req.status),
    );
    if (req.newestFirst) out = out.reverse();
    return req.limit && req.limit > 0 ? out.slice(0, req.limit) : out;
  }

  /** How many entries are kept. */
  get size(): number {
    return this.entries.length;
  }
}
