import type { agent } from "@persys/schema";

/** What the agent did to a replica. */
export type ActionType = "apply" | "delete" | "restart" | "reboot" | "gc";
export type ActionStatus = "pending" | "running" | "succeeded" | "failed";

interface Action {
  readonly taskId: string;
  readonly workloadId: string;
  readonly actionType: ActionType;
  status: ActionStatus;
  error: string;
  readonly createdAt: number;
  startedAt: number;
  endedAt: number;
}

/** A running action; `done` records its outcome once. */
export interface ActionHandle {
  readonly taskId: string;
  start(): void;
  done(error?: string): void;
}

/**
 * The recent runtime actions of the agent (ListActions): apply, delete, restart and garbage
 * collection tasks with their outcome. In memory, newest `capacity` kept (the Go agent kept every
 * task since startup).
 */
export class ActionLog {
  private readonly actions: Action[] = [];
  private sequence = 0;

  constructor(
    private readonly capacity = 1000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Records a new pending action. */
  begin(actionType: ActionType, workloadId: string): ActionHandle {
    const now = this.clock();
    const action: Action = {
      taskId: `${actionType}-${workloadId}-${now}-${++this.sequence}`,
      workloadId,
      actionType,
      status: "pending",
      error: "",
      createdAt: now,
      startedAt: 0,
      endedAt: 0,
    };
    this.actions.push(action);
    if (this.actions.length > this.capacity) this.actions.splice(0, this.actions.length - this.capacity);
    return {
      taskId: action.taskId,
      start: () => {
        if (action.status !== "pending") return;
        action.status = "running";
        action.startedAt = this.clock();
      },
      done: (error) => {
        if (action.status === "succeeded" || action.status === "failed") return;
        action.status = error ? "failed" : "succeeded";
        action.error = error ?? "";
        action.startedAt ||= this.clock();
        action.endedAt = this.clock();
      },
    };
  }

  /** Actions matching the request's filters (empty filter: any), oldest first unless `newestFirst`. */
  list(request: agent.ListActionsRequest): agent.AgentAction[] {
    const seconds = (ms: number) => (ms > 0 ? Math.floor(ms / 1000) : 0);
    let matching = this.actions.filter(
      (a) =>
        (!request.workloadId || a.workloadId === request.workloadId) &&
        (!request.actionType || a.actionType === request.actionType) &&
        (!request.status || a.status === request.status),
    );
    if (request.newestFirst) matching = [...matching].reverse();
    if (request.limit > 0) matching = matching.slice(0, request.limit);
    return matching.map((a) => ({
      taskId: a.taskId,
      workloadId: a.workloadId,
      actionType: a.actionType,
      status: a.status,
      error: a.error,
      createdAt: seconds(a.createdAt),
      startedAt: seconds(a.startedAt),
      endedAt: seconds(a.endedAt),
    }));
  }

  /** How many actions of a type were recorded for a replica (tests count retry storms with it). */
  count(actionType: ActionType, workloadId?: string): number {
    return this.actions.filter((a) => a.actionType === actionType && (!workloadId || a.workloadId === workloadId))
      .length;
  }
}
