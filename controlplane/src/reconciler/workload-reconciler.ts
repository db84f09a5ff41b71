import { api, PersysError } from "@persys/schema";
import type { Versioned } from "../cluster/cluster-state.js";
import { replicaName } from "../cluster/keys.js";
import {
  type AssignmentRecord,
  agentRevisionOf,
  encodeRecord,
  moveApplies,
  type PendingRecord,
  type ReplicaMoveRecord,
  type ReplicaStatusRecord,
  rebootGenerationOf,
  reportOf,
  type WorkloadRecord,
  workloadOf,
} from "../cluster/records.js";
import { apiDiagnosis } from "../cluster/scheduler-mapping.js";
import { secretRevisionSuffix, withSecretRevision } from "../secrets/secret-references.js";
import { resolveSecrets } from "../secrets/secret-resolver.js";
import type { TxnOp } from "../state/state-store.js";
import { agentApplyRequest } from "./agent-request.js";
import type { ReconcileContext } from "./reconciler.js";
import { inProgress, isTerminal, newProgress, type ReplicaProgress, stateMeets } from "./replica-progress.js";

/** How long a push may go unanswered by a report before it is sent again. */
const PUSH_GRACE_MS = 30_000;

/**
 * Reconciles one workload: removes replicas beyond the count or on lost and draining nodes, places
 * missing replicas (or records why they cannot be placed), and rolls replicas to the desired revision
 * and state, a few at a time, with backoff on failures and no blind retry of terminal ones.
 */
export class WorkloadReconciler {
  private readonly progress = new Map<string, ReplicaProgress>();
  private readonly retryNonces = new Map<string, number>();
  /** Moves that found no node, by `<workload>/<index>@<requestedAt>`: their event is recorded once. */
  private readonly blockedMoves = new Set<string>();

  constructor(private readonly ctx: ReconcileContext) {}

  private progressOf(workloadId: string, index: number): ReplicaProgress {
    const key = `${workloadId}/${index}`;
    const p = this.progress.get(key) ?? newProgress();
    this.progress.set(key, p);
    return p;
  }

  async reconcile(workloadId: string): Promise<void> {
    const { state } = this.ctx;
    const held = state.workloads.get(workloadId);
    if (!held || held.value.deletionRequestedAt) {
      await this.teardown(workloadId, held);
      return;
    }
    const record = held.value;
    const workload = workloadOf(record);
    const replicas = workload.replicas ?? 1;
    this.applyRetry(workloadId, record);

    for (const index of state.replicaIndexes(workloadId)) {
      if (index >= replicas) await this.removeReplica(workloadId, index, "scaled down");
    }
    for (const a of state.assignmentsOf(workloadId)) {
      const node = state.nodes.get(a.value.nodeId)?.value;
      if (!node || node.lostAt)
        await this.removeReplica(workloadId, a.value.index, `node ${a.value.nodeId} was lost`, true);
      else if (node.draining)
        await this.removeReplica(workloadId, a.value.index, `node ${a.value.nodeId} is draining`, true);
    }
    for (const a of state.assignmentsOf(workloadId)) {
      const move = record.replicaMoves?.[String(a.value.index)];
      if (a.value.index < replicas && moveApplies(move, a.value)) await this.moveReplica(record, workload, a, move);
    }
    const missing: number[] = [];
    for (let index = 0; index < replicas; index++) if (!state.assignment(workloadId, index)) missing.push(index);
    if (missing.length > 0) await this.place(record, workload, missing);
    await this.rollout(record, workload);
  }

  /** A Retry request (a new retry nonce) clears backoff and terminal marks of the workload's replicas. */
  private applyRetry(workloadId: string, record: WorkloadRecord): void {
    const nonce = record.retryNonce ?? 0;
    const seen = this.retryNonces.get(workloadId);
    this.retryNonces.set(workloadId, nonce);
    if (seen === undefined || seen === nonce) return;
    for (const [key, p] of this.progress) {
      if (key.startsWith(`${workloadId}/`)) Object.assign(p, newProgress());
    }
    for (const index of this.ctx.state.replicaIndexes(workloadId)) this.ctx.queue.forget(`w:${workloadId}#${index}`);
  }

  private async place(record: WorkloadRecord, workload: api.Workload, missing: number[]): Promise<void> {
    const { view, keys, state, batcher, events } = this.ctx;
    const compiled = view.compiled(record, workload);
    const placed: { index: number; nodeId: string; diagnosis: api.PlacementDiagnosis }[] = [];
    const ops: TxnOp[] = [];
    const compare = [];
    const now = new Date(this.ctx.now()).toISOString();
    for (const index of missing) {
      if (view.snapshot.placementOf(workload.id, index) !== undefined) view.release(workload.id, index);
      const decision = view.engine.placeReplica(compiled, index);
      const diagnosis = apiDiagnosis(decision.diagnosis, workload);
      if (decision.nodeId) {
        view.pending.resolve(workload.id, index);
        placed.push({ index, nodeId: decision.nodeId, diagnosis });
        const assignment: AssignmentRecord = {
          workloadId: workload.id,
          index,
          nodeId: decision.nodeId,
          placedAt: now,
          diagnosis: api.PlacementDiagnosis.toJSON(diagnosis),
        };
        const key = keys.assignment(workload.id, index);
        compare.push({ key, target: "version" as const, op: "=" as const, value: 0 });
        ops.push({ type: "put", key, value: encodeRecord(assignment) });
        if (state.pendingOf(workload.id, index)) ops.push({ type: "delete", key: keys.pending(workload.id, index) });
      } else {
        view.pending.record(decision.diagnosis);
        const existing = state.pendingOf(workload.id, index)?.value;
        const previousMessage = existing ? api.PlacementDiagnosis.fromJSON(existing.diagnosis).message : undefined;
        if (previousMessage !== diagnosis.message) {
          const pending: PendingRecord = {
            workloadId: workload.id,
            index,
            diagnosis: api.PlacementDiagnosis.toJSON(diagnosis),
            since: existing?.since ?? now,
          };
          ops.push({ type: "put", key: keys.pending(workload.id, index), value: encodeRecord(pending) });
          void events.record({
            type: "ReplicaUnschedulable",
            severity: "warning",
            workloadId: workload.id,
            replicaIndex: index,
            message: `replica ${index} is pending: ${diagnosis.message}`,
            code: "UNSCHEDULABLE",
          });
        }
      }
    }
    if (ops.length === 0) return;
    const outcome = await batcher.submit({ compare, ops });
    if (!outcome.succeeded) {
      for (const p of placed) view.release(workload.id, p.index);
      if (!this.ctx.active()) return;
      throw new PersysError("CONFLICT", `placement of ${workload.id} raced with another change; retrying`);
    }
    await state.waitFor(outcome.revision);
    for (const p of placed) {
      void events.record({
        type: "ReplicaPlaced",
        workloadId: workload.id,
        replicaIndex: p.index,
        nodeId: p.nodeId,
        message: `replica ${p.index} placed on ${p.nodeId}: ${p.diagnosis.message}`,
        attributes: { revision: record.revision },
      });
    }
  }

  /**
   * Carries out a MoveReplica request: the scheduler decides again, off the node the replica
   * leaves (the `replica-move` filter), the assignment is rewritten to the new node in one
   * compare-and-swap, and only then is the old copy stopped (if that fails, the node reports the
   * copy as a stray and it is stopped then). When no node fits, the replica stays and a
   * `ReplicaMoveBlocked` event says why; the request is tried again on later reconciles.
   */
  private async moveReplica(
    record: WorkloadRecord,
    workload: api.Workload,
    a: Versioned<AssignmentRecord>,
    move: ReplicaMoveRecord,
  ): Promise<void> {
    const { view, keys, state, batcher, events, pool } = this.ctx;
    const { index, nodeId: from } = a.value;
    const decision = view.decideMove(
      record,
      a.value,
      { leaving: [from], ...(move.toNode ? { target: move.toNode } : {}) },
      true,
    );
    const placed = apiDiagnosis(decision.diagnosis, workload);
    const to = decision.nodeId;
    if (!to) {
      const key = `${workload.id}/${index}@${move.requestedAt}`;
      if (!this.blockedMoves.has(key)) {
        this.blockedMoves.add(key);
        void events.record({
          type: "ReplicaMoveBlocked",
          severity: "warning",
          workloadId: workload.id,
          replicaIndex: index,
          nodeId: from,
          code: "UNSCHEDULABLE",
          message: `replica ${index} stays on ${from}, no node can take it: ${placed.message}`,
        });
      }
      return;
    }
    const why = `${move.reason}${move.by ? `, by ${move.by}` : ""}`;
    const diagnosis: api.PlacementDiagnosis = { ...placed, message: `moved from ${from} (${why}): ${placed.message}` };
    const assignment: AssignmentRecord = {
      workloadId: workload.id,
      index,
      nodeId: to,
      placedAt: new Date(this.ctx.now()).toISOString(),
      diagnosis: api.PlacementDiagnosis.toJSON(diagnosis),
    };
    const key = keys.assignment(workload.id, index);
    const ops: TxnOp[] = [{ type: "put", key, value: encodeRecord(assignment) }];
    if (state.status(workload.id, index)) ops.push({ type: "delete", key: keys.status(workload.id, index) });
    const outcome = await batcher.submit({
      compare: [{ key, target: "modRevision", op: "=", value: a.modRevision }],
      ops,
    });
    if (!outcome.succeeded) {
      view.release(workload.id, index);
      const current = state.assignment(workload.id, index)?.value;
      if (current) view.syncAssignment(current);
      if (!this.ctx.active()) return;
      throw new PersysError("CONFLICT", `move of ${workload.id}/${index} raced with another change; retrying`);
    }
    this.progress.delete(`${workload.id}/${index}`);
    await state.waitFor(outcome.revision);
    const old = state.nodes.get(from)?.value;
    if (old && state.isLive(from) && !old.lostAt) {
      try {
        await pool.delete(old.endpoint, old.id, replicaName(workload.id, index));
      } catch (error) {
        if (!(error instanceof PersysError && error.code === "NOT_FOUND"))
          this.ctx.logger?.warn({ err: String(error), node: from }, "old copy of a moved replica not stopped yet");
      }
    }
    void events.record({
      type: "ReplicaMoved",
      workloadId: workload.id,
      replicaIndex: index,
      nodeId: from,
      message: `replica ${index} moved from ${from} to ${to}: ${why}`,
      attributes: { to, reason: move.reason, ...(move.by ? { by: move.by } : {}) },
    });
    void events.record({
      type: "ReplicaPlaced",
      workloadId: workload.id,
      replicaIndex: index,
      nodeId: to,
      message: `replica ${index} placed on ${to}: ${diagnosis.message}`,
      attributes: { revision: record.revision },
    });
  }

  /** Pushes the desired revision and state to replicas, a few at a time (maxUnavailable). */
  private async rollout(record: WorkloadRecord, workload: api.Workload): Promise<void> {
    const { state } = this.ctx;
    const replicas = workload.replicas ?? 1;
    const desired = workload.desiredState;
    const maxUnavailable = Math.max(1, workload.updateStrategy?.maxUnavailable ?? 1);
    const assignments = state.assignmentsOf(workload.id).filter((a) => a.value.index < replicas);
    const now = this.ctx.now();
    const rows = assignments.map((a) => {
      const status = state.status(workload.id, a.value.index)?.value;
      const report = status && status.nodeId === a.value.nodeId ? reportOf(status) : undefined;
      const expected = withSecretRevision(agentRevisionOf(record, a.value), secretRevisionSuffix(state, record));
      return { a, status, report, expected };
    });
    let down = rows.filter((r) => r.report?.state !== api.ReplicaState.REPLICA_STATE_RUNNING).length;
    let nextWake = Number.POSITIVE_INFINITY;
    for (const row of rows) {
      const { a, report, expected } = row;
      const index = a.value.index;
      const p = this.progressOf(workload.id, index);
      if (!state.isLive(a.value.nodeId)) continue;
      const atRevision = report?.observedRevision === expected;
      if (atRevision && report && stateMeets(report.state, desired)) {
        if (p.attempts > 0 || p.terminal) Object.assign(p, newProgress(), { pushed: p.pushed });
        continue;
      }
      if (p.failedRevision !== expected) Object.assign(p, newProgress(), { pushed: p.pushed });
      if (atRevision && report?.state === api.ReplicaState.REPLICA_STATE_FAILED && !p.failureNoted) {
        // The runtime failed this revision: terminal reasons wait for a change or Retry, others back off.
        this.noteFailure(workload.id, index, expected, report.reason);
      }
      if (p.terminal) continue;
      if (p.nextRetryAt > now) {
        nextWake = Math.min(nextWake, p.nextRetryAt);
        continue;
      }
      const samePush = p.pushed?.agentRevision === expected && p.pushed.desiredState === desired;
      const working = report && atRevision && inProgress(report.state);
      if (
        samePush &&
        (working || now - p.pushed!.at < PUSH_GRACE_MS) &&
        report?.state !== api.ReplicaState.REPLICA_STATE_FAILED
      ) {
        if (!working) nextWake = Math.min(nextWake, p.pushed!.at + PUSH_GRACE_MS);
        continue;
      }
      const serving = report?.state === api.ReplicaState.REPLICA_STATE_RUNNING;
      if (serving && desired === api.DesiredState.DESIRED_STATE_RUNNING && !atRevision) {
        if (down >= maxUnavailable) continue;
        down++;
      }
      p.pushed = { agentRevision: expected, desiredState: desired, at: now };
      p.failureNoted = false;
      this.ctx.pushes.run(() => this.push(record, workload, a, expected, desired, p));
    }
    if (Number.isFinite(nextWake)) this.ctx.queue.addAfter(`w:${workload.id}`, Math.max(10, nextWake - this.ctx.now()));
  }

  private noteFailure(workloadId: string, index: number, revision: string, reason: api.Reason | undefined): void {
    const p = this.progressOf(workloadId, index);
    p.failedRevision = revision;
    p.failureNoted = true;
    p.attempts++;
    p.terminal = isTerminal(reason);
    if (!p.terminal) p.nextRetryAt = this.ctx.now() + this.ctx.queue.nextBackoff(`w:${workloadId}#${index}`);
  }

  private async push(
    record: WorkloadRecord,
    workload: api.Workload,
    a: Versioned<AssignmentRecord>,
    expected: string,
    desired: api.DesiredState,
    p: ReplicaProgress,
  ): Promise<void> {
    const { state, pool, events } = this.ctx;
    const node = state.nodes.get(a.value.nodeId)?.value;
    if (!node) return;
    const index = a.value.index;
    const request = agentApplyRequest({
      workload,
      index,
      nodeId: node.id,
      generation: a.createRevision,
      revision: record.revision,
      agentRevision: expected,
      rebootGeneration: rebootGenerationOf(record, a.value),
      desiredState: desired,
    });
    try {
      // Secret values travel in their own field, only to this node, never into a record or a log.
      const secrets = await resolveSecrets(this.ctx.secrets, workload);
      const response = await pool.apply(
        node.endpoint,
        node.id,
        secrets ? { ...request, persysSecrets: secrets } : request,
      );
      if (!response.applied && !response.skipped) {
        const reason = response.status?.persys?.reason;
        throw new PersysError(
          reason ? (api.errorCodeToJSON(reason.code) as never) : "INVALID_SPEC",
          `agent rejected replica ${index}: ${response.message || reason?.message || "no reason given"}`,
          { retryable: reason?.retryable ?? false },
        );
      }
      if (response.status?.persys) await this.recordReport(node.id, response.status.persys, expected, a);
      void events.record({
        type: "ReplicaApplied",
        workloadId: workload.id,
        replicaIndex: index,
        nodeId: node.id,
        message: `replica ${index} sent to ${node.id} (revision ${expected}, ${desired === api.DesiredState.DESIRED_STATE_STOPPED ? "stopped" : "running"})`,
      });
    } catch (error) {
      const e = error instanceof PersysError ? error : new PersysError("RUNTIME_ERROR", String(error));
      this.noteFailure(workload.id, index, expected, {
        code: api.errorCodeFromJSON(e.code),
        message: e.message,
        retryable: e.retryable,
        attempts: p.attempts,
      });
      const retryAt = p.terminal ? undefined : new Date(p.nextRetryAt);
      await this.recordReport(
        node.id,
        api.ReplicaReport.fromPartial({
          workloadId: workload.id,
          replicaIndex: index,
          state: api.ReplicaState.REPLICA_STATE_FAILED,
          reason: {
            code: api.errorCodeFromJSON(e.code),
            message: e.message,
            retryable: !p.terminal,
            attempts: p.attempts,
            ...(retryAt ? { nextRetryAt: retryAt } : {}),
          },
          observedRevision: expected,
          assignmentGeneration: a.createRevision,
        }),
        expected,
        a,
      );
      if (retryAt) {
        void events.record({
          type: "ReplicaRetryScheduled",
          severity: "warning",
          workloadId: workload.id,
          replicaIndex: index,
          nodeId: node.id,
          code: e.code,
          message: `replica ${index}: ${e.message}; retry ${p.attempts} at ${retryAt.toISOString()}`,
        });
      }
    }
  }

  private async recordReport(
    nodeId: string,
    report: api.ReplicaReport,
    agentRevision: string,
    a: Versioned<AssignmentRecord>,
  ): Promise<void> {
    const { keys, batcher, state } = this.ctx;
    const current = state.status(a.value.workloadId, a.value.index)?.value;
    const json = api.ReplicaReport.toJSON(report);
    if (current && current.nodeId === nodeId && JSON.stringify(current.report) === JSON.stringify(json)) return;
    const status: ReplicaStatusRecord = {
      nodeId,
      report: json,
      agentRevision,
      updatedAt: new Date(this.ctx.now()).toISOString(),
    };
    const key = keys.assignment(a.value.workloadId, a.value.index);
    const outcome = await batcher.submit({
      compare: [{ key, target: "createRevision", op: "=", value: a.createRevision }],
      ops: [{ type: "put", key: keys.status(a.value.workloadId, a.value.index), value: encodeRecord(status) }],
    });
    if (outcome.succeeded) await state.waitFor(outcome.revision);
  }

  /**
   * Stops a replica on its node and forgets it. A node that does not answer because it is not live
   * is skipped: when it returns, its copy is reported as a stray and stopped then.
   */
  async removeReplica(workloadId: string, index: number, why: string, moving = false): Promise<void> {
    const { state, keys, pool, batcher, view, events } = this.ctx;
    const a = state.assignment(workloadId, index);
    if (a) {
      const node = state.nodes.get(a.value.nodeId)?.value;
      if (node && state.isLive(node.id) && !node.lostAt) {
        try {
          await pool.delete(node.endpoint, node.id, replicaName(workloadId, index));
        } catch (error) {
          if (!(error instanceof PersysError && error.code === "NOT_FOUND")) throw error;
        }
      }
    }
    const ops: TxnOp[] = [];
    if (a) ops.push({ type: "delete", key: keys.assignment(workloadId, index) });
    if (state.status(workloadId, index)) ops.push({ type: "delete", key: keys.status(workloadId, index) });
    if (state.pendingOf(workloadId, index)) ops.push({ type: "delete", key: keys.pending(workloadId, index) });
    if (ops.length === 0) return;
    const compare = a
      ? [
          {
            key: keys.assignment(workloadId, index),
            target: "modRevision" as const,
            op: "=" as const,
            value: a.modRevision,
          },
        ]
      : [];
    const outcome = await batcher.submit({ compare, ops });
    if (!outcome.succeeded)
      throw new PersysError("CONFLICT", `replica ${workloadId}/${index} changed while removing it`);
    view.release(workloadId, index);
    view.pending.resolve(workloadId, index);
    this.progress.delete(`${workloadId}/${index}`);
    await state.waitFor(outcome.revision);
    if (a) {
      void events.record({
        type: moving ? "ReplicaMoved" : "ReplicaRemoved",
        severity: moving ? "warning" : "info",
        workloadId,
        replicaIndex: index,
        nodeId: a.value.nodeId,
        message: `replica ${index} removed from ${a.value.nodeId}: ${why}${moving ? "; it is re-placed" : ""}`,
        ...(moving && why.includes("lost") ? { code: "NODE_LOST" as const } : {}),
      });
    }
  }

  /** Removes every replica of a deleted workload, then its record. */
  private async teardown(workloadId: string, held: Versioned<WorkloadRecord> | undefined): Promise<void> {
    const { state, keys, batcher, events } = this.ctx;
    for (const index of state.replicaIndexes(workloadId))
      await this.removeReplica(workloadId, index, "workload deleted");
    this.retryNonces.delete(workloadId);
    if (!held) return;
    const outcome = await batcher.submit({
      compare: [{ key: keys.workload(workloadId), target: "modRevision", op: "=", value: held.modRevision }],
      ops: [{ type: "delete", key: keys.workload(workloadId) }],
    });
    if (!outcome.succeeded) return; // Re-applied meanwhile: the next reconcile sees the new record.
    await state.waitFor(outcome.revision);
    void events.record({
      type: "WorkloadDeleted",
      workloadId,
      message: `workload ${workloadId} deleted; every replica removed`,
    });
  }
}
