import {
  api,
  assertValidWorkload,
  defaultedWorkloadRevision,
  type FieldViolation,
  invalid,
  MAX_APPLY_WORKLOADS,
  PersysError,
  withDefaults,
} from "@persys/schema";
import type { ClusterState, Versioned } from "../cluster/cluster-state.js";
import { composeWarnings } from "../cluster/compose-workload.js";
import type { EventRecorder } from "../cluster/event-recorder.js";
import type { ClusterKeys } from "../cluster/keys.js";
import { encodeRecord, moveApplies, type WorkloadRecord, workloadOf } from "../cluster/records.js";
import { apiDiagnosis } from "../cluster/scheduler-mapping.js";
import type { SchedulingView } from "../scheduling/scheduling-view.js";
import { ReadBatcher } from "../state/read-batcher.js";
import { type Compare, MAX_TXN_OPS, type StateStore } from "../state/state-store.js";
import { type BatchItem, TxnBatcher } from "../state/txn-batcher.js";
import { decodeJson } from "../state/value-codec.js";
import { pageSize, pageToken, parseLabelSelector } from "./label-selector-query.js";
import { replicaStatus, workloadView } from "./workload-view.js";

export interface WorkloadServiceOptions {
  readonly store: StateStore;
  readonly state: ClusterState;
  readonly keys: ClusterKeys;
  readonly view: SchedulingView;
  readonly events: EventRecorder;
  readonly clock?: () => number;
}

interface ApplyItem {
  readonly workload: api.Workload;
  readonly expectedRevision?: string;
}

interface ApplyOutcome {
  readonly id: string;
  readonly changed: boolean;
  readonly created: boolean;
}

const notFound = (id: string) =>
  new PersysError("NOT_FOUND", `workload ${id} not found`, {
    details: [{ path: "workloadId", reason: "no such workload" }],
  });

const requireId = (id: string, path = "workloadId") => {
  if (!id) throw invalid("INVALID_ARGUMENT", [{ path, reason: "is required" }]);
  return id;
};

/** Canonical JSON of a workload's input fields (defaults applied), for "did anything change". */
const inputJson = (w: api.Workload) => JSON.stringify(api.Workload.toJSON({ ...w, status: undefined }));

/**
 * The workload half of the public API. Writes go to the state store with compare-and-swap (so a
 * concurrent change is never lost); reads come from the cluster state cache after waiting for the
 * write's revision (read-your-writes). Apply is create-or-update by id and idempotent: the same input
 * changes nothing and keeps the revision.
 */
export class WorkloadService {
  private readonly clock: () => number;
  /** Applies group-commit: concurrent ones share store transactions (no leader fence: any server writes). */
  private readonly writes: TxnBatcher;
  /** Applies' linearizable reads of their records, merged across concurrent calls. */
  private readonly reads: ReadBatcher;

  constructor(private readonly o: WorkloadServiceOptions) {
    this.clock = o.clock ?? Date.now;
    this.writes = new TxnBatcher(o.store, () => undefined);
    this.reads = new ReadBatcher(o.store);
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  private view(id: string, full = true): api.Workload {
    const held = this.o.state.workloads.get(id);
    if (!held) throw notFound(id);
    return workloadView(this.o.state, held, full);
  }

  /**
   * Reads the record from the store (not the cache), applies `change`, and writes it back if the
   * result differs, compare-and-swap on the record's revision; retried on a concurrent change.
   */
  private async update(
    id: string,
    change: (record: WorkloadRecord) => WorkloadRecord | undefined,
    missing: () => never = () => {
      throw notFound(id);
    },
  ): Promise<{ record: WorkloadRecord; changed: boolean }> {
    const key = this.o.keys.workload(id);
    for (let attempt = 0; attempt < 8; attempt++) {
      const kv = await this.o.store.get(key);
      if (!kv) missing();
      const before = decodeJson<WorkloadRecord>(kv!.value);
      const after = change(before);
      if (!after) return { record: before, changed: false };
      const result = await this.o.store.txn({
        compare: [{ key, target: "modRevision", op: "=", value: kv!.modRevision }],
        success: [{ type: "put", key, value: encodeRecord(after) }],
      });
      if (result.succeeded) {
        await this.o.state.waitFor(result.revision);
        return { record: after, changed: true };
      }
    }
    throw new PersysError("CONFLICT", `workload ${id} changed concurrently too often; retry`);
  }

  async apply(request: api.ApplyWorkloadRequest): Promise<api.ApplyWorkloadResponse> {
    if (!request.workload) throw invalid("INVALID_ARGUMENT", [{ path: "workload", reason: "is required" }]);
    const [outcome] = await this.applyAll([
      {
        workload: request.workload,
        ...(request.expectedRevision === undefined ? {} : { expectedRevision: request.expectedRevision }),
      },
    ]);
    return { workload: this.view(outcome!.id), changed: outcome!.changed, created: outcome!.created };
  }

  async applyMany(request: api.ApplyWorkloadsRequest): Promise<api.ApplyWorkloadsResponse> {
    if (request.workloads.length > MAX_APPLY_WORKLOADS) {
      throw invalid("INVALID_ARGUMENT", [
        {
          path: "workloads",
          reason: `has ${request.workloads.length} workloads; at most ${MAX_APPLY_WORKLOADS} per call`,
        },
      ]);
    }
    const seen = new Map<string, number>();
    request.workloads.forEach((w, i) => {
      const first = seen.get(w.id);
      if (w.id && first !== undefined) {
        throw invalid("INVALID_ARGUMENT", [
          {
            path: `workloads[${i}].id`,
            reason: `repeats workloads[${first}].id (${w.id}); each workload once per call`,
          },
        ]);
      }
      seen.set(w.id, i);
    });
    const outcomes = await this.applyAll(
      request.workloads.map((workload) => ({ workload })),
      "workloads",
    );
    return {
      results: outcomes.map((o) => ({ workload: this.view(o.id, false), changed: o.changed, created: o.created })),
    };
  }

  /**
   * Applies every item or none: all are validated and checked against the stored records (read
   * linearizably, all in one store transaction) before anything is written; then the changed ones are written with
   * compare-and-swap through the group-committing batcher, so concurrent applies share store
   * transactions. An item whose compare failed (a concurrent change) is checked and written again.
   * With `listPath`, error details name `<listPath>[i].<field>`; without it (one item) the fields.
   */
  private async applyAll(items: readonly ApplyItem[], listPath?: string): Promise<ApplyOutcome[]> {
    const at = (i: number, path: string) => (listPath ? `${listPath}[${i}]${path ? `.${path}` : ""}` : path);
    const violations: FieldViolation[] = [];
    const prepared = items.map((item, i) => {
      try {
        const workload = assertValidWorkload(withDefaults(item.workload));
        return { ...item, workload, revision: defaultedWorkloadRevision(workload) };
      } catch (error) {
        if (!listPath || !(error instanceof PersysError)) throw error;
        for (const d of error.details) violations.push({ ...d, path: at(i, d.path) });
        return undefined;
      }
    });
    if (violations.length > 0) throw invalid("INVALID_SPEC", violations, `workloads`);
    const outcomes: ApplyOutcome[] = [];
    let todo = prepared.map((_, i) => i);
    for (let attempt = 0; attempt < 8 && todo.length > 0; attempt++) {
      const stored = await this.readRecords(todo.map((i) => prepared[i]!.workload.id));
      let seen = 0;
      const writes: {
        index: number;
        workload: api.Workload;
        previous: WorkloadRecord | undefined;
        record: WorkloadRecord;
        write: BatchItem;
      }[] = [];
      for (const i of todo) {
        const { workload, revision, expectedRevision } = prepared[i]!;
        const key = this.o.keys.workload(workload.id);
        const held = stored.get(workload.id);
        const existing = held?.value;
        const record = this.applied(workload, revision, existing, expectedRevision, (path) => at(i, path));
        if (!record) {
          outcomes[i] = { id: workload.id, changed: false, created: false };
          seen = Math.max(seen, held!.modRevision);
          continue;
        }
        const compare: Compare = held
          ? { key, target: "modRevision", op: "=", value: held.modRevision }
          : { key, target: "version", op: "=", value: 0 };
        const write = { compare: [compare], ops: [{ type: "put" as const, key, value: encodeRecord(record) }] };
        writes.push({ index: i, workload, previous: existing, record, write });
      }
      const results = await Promise.all(writes.map((w) => this.writes.submit(w.write)));
      todo = [];
      let revision = 0;
      writes.forEach((w, k) => {
        const result = results[k]!;
        if (!result.succeeded) todo.push(w.index);
        else {
          revision = Math.max(revision, result.revision);
          outcomes[w.index] = { id: w.workload.id, changed: true, created: !w.previous };
          this.recordApplied(w.workload, w.record, w.previous);
        }
      });
      // Read-your-writes for the views answered: the cache holds every record read or written.
      if (Math.max(revision, seen) > 0) await this.o.state.waitFor(Math.max(revision, seen));
    }
    if (todo.length > 0) {
      const ids = todo.map((i) => prepared[i]!.workload.id).join(", ");
      throw new PersysError("CONFLICT", `workload ${ids} changed concurrently too often; retry`);
    }
    return outcomes;
  }

  /**
   * The stored records of `ids`, read linearizably in as few store transactions as the store allows
   * (one for up to MAX_TXN_OPS ids, shared with concurrent calls), with the modRevision each write
   * compares against.
   */
  private async readRecords(ids: readonly string[]): Promise<Map<string, Versioned<WorkloadRecord>>> {
    const chunks: string[][] = [];
    for (let from = 0; from < ids.length; from += MAX_TXN_OPS) chunks.push(ids.slice(from, from + MAX_TXN_OPS));
    const read = await Promise.all(chunks.map((chunk) => this.reads.read(chunk.map((id) => this.o.keys.workload(id)))));
    const records = new Map<string, Versioned<WorkloadRecord>>();
    for (const [c, values] of read.entries()) {
      for (const [k, kv] of values.entries()) {
        if (!kv) continue;
        const { value, modRevision, createRevision } = kv;
        records.set(chunks[c]![k]!, { value: decodeJson<WorkloadRecord>(value), modRevision, createRevision });
      }
    }
    return records;
  }

  /**
   * The record to write for `workload` over `existing`, or undefined when nothing would change.
   * @throws PersysError for a deletion under way, a revision precondition or a kind change.
   */
  private applied(
    workload: api.Workload,
    revision: string,
    existing: WorkloadRecord | undefined,
    expectedRevision: string | undefined,
    at: (path: string) => string,
  ): WorkloadRecord | undefined {
    if (existing?.deletionRequestedAt) {
      throw new PersysError("CONFLICT", `workload ${workload.id} is being deleted; apply again once it is gone`, {
        details: [{ path: at("id"), reason: "is being deleted" }],
      });
    }
    if (expectedRevision !== undefined && (existing?.revision ?? "") !== expectedRevision) {
      throw new PersysError(
        "CONFLICT",
        `workload ${workload.id} is at revision ${existing?.revision ?? "(none)"}, not ${expectedRevision}`,
        { details: [{ path: "expectedRevision", reason: "does not match the current revision" }] },
      );
    }
    if (existing) {
      const before = workloadOf(existing);
      if (before.kind !== workload.kind) {
        throw invalid("INVALID_SPEC", [
          { path: at("kind"), reason: "is immutable: delete the workload and apply it again" },
        ]);
      }
      if (inputJson(before) === inputJson(workload)) return undefined;
    }
    const now = this.now();
    return {
      ...(existing ?? {}),
      workload: api.Workload.toJSON(workload),
      revision,
      generation: (existing?.generation ?? 0) + 1,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
  }

  /** The events of one applied workload (`previous`: the record it replaced). */
  private recordApplied(workload: api.Workload, record: WorkloadRecord, previous: WorkloadRecord | undefined): void {
    const { revision } = record;
    void this.o.events.record({
      type: "WorkloadApplied",
      workloadId: workload.id,
      message: previous
        ? `workload ${workload.id} updated to revision ${revision}${previous.revision === revision ? " (same revision)" : ` (was ${previous.revision})`}`
        : `workload ${workload.id} created at revision ${revision}`,
      attributes: { revision, generation: String(record.generation) },
    });
    const ignored = composeWarnings(workload);
    if (ignored.length > 0) {
      void this.o.events.record({
        type: "ComposeKeysIgnored",
        severity: "warning",
        workloadId: workload.id,
        message: `compose file of ${workload.id}: ${ignored.join("; ")}`,
        attributes: { revision },
      });
    }
  }

  get(request: api.GetWorkloadRequest): api.GetWorkloadResponse {
    return {
      workload: this.view(requireId(request.workloadId), request.view !== api.WorkloadView.WORKLOAD_VIEW_BASIC),
    };
  }

  list(request: api.ListWorkloadsRequest): api.ListWorkloadsResponse {
    const size = pageSize(request.pageSize);
    const after = pageToken.decode(request.pageToken);
    const matchLabels = parseLabelSelector(request.labelSelector);
    const full = request.view === api.WorkloadView.WORKLOAD_VIEW_FULL;
    const ids = [...this.o.state.workloads.keys()].filter((id) => id > after).sort();
    const workloads: api.Workload[] = [];
    let last = "";
    for (const id of ids) {
      const held = this.o.state.workloads.get(id)!;
      const view = workloadView(this.o.state, held, full);
      if (request.kind && view.kind !== request.kind) continue;
      if (request.state && view.status?.state !== request.state) continue;
      if (request.nodeId && !view.status?.replicas.some((r) => r.nodeId === request.nodeId)) continue;
      if (!matchLabels(view.labels)) continue;
      if (workloads.length === size)
        return { workloads, nextPageToken: pageToken.encode(last), storeRevision: this.o.state.revision };
      workloads.push(view);
      last = id;
    }
    return { workloads, nextPageToken: "", storeRevision: this.o.state.revision };
  }

  async delete(request: api.DeleteWorkloadRequest): Promise<api.DeleteWorkloadResponse> {
    const id = requireId(request.workloadId);
    let gone = false;
    await this.update(
      id,
      (record) => (record.deletionRequestedAt ? undefined : { ...record, deletionRequestedAt: this.now() }),
      () => {
        if (!request.allowMissing) throw notFound(id);
        gone = true;
        throw new PersysError("NOT_FOUND", "gone");
      },
    ).catch((error) => {
      if (!gone) throw error;
    });
    if (gone) return {};
    const held = this.o.state.workloads.get(id);
    return held ? { workload: workloadView(this.o.state, held, false) } : {};
  }

  private async setDesired(id: string, desired: api.DesiredState): Promise<api.Workload> {
    await this.update(requireId(id), (record) => {
      if (record.deletionRequestedAt) throw new PersysError("CONFLICT", `workload ${id} is being deleted`);
      const workload = workloadOf(record);
      if (workload.desiredState === desired) return undefined;
      return {
        ...record,
        workload: api.Workload.toJSON({ ...workload, desiredState: desired }),
        generation: record.generation + 1,
        updatedAt: this.now(),
      };
    });
    return this.view(id);
  }

  async start(request: api.StartWorkloadRequest): Promise<api.StartWorkloadResponse> {
    return { workload: await this.setDesired(request.workloadId, api.DesiredState.DESIRED_STATE_RUNNING) };
  }

  async stop(request: api.StopWorkloadRequest): Promise<api.StopWorkloadResponse> {
    return { workload: await this.setDesired(request.workloadId, api.DesiredState.DESIRED_STATE_STOPPED) };
  }

  /**
   * Recreates replicas (rolling, one at a time by default) at the same revision, or, in reboot mode,
   * reboots them in place (a VM guest through ACPI, a container by `docker restart`). A reboot of a
   * workload that is not desired running is a CONFLICT. Not idempotent: each call is one more.
   */
  async restart(request: api.RestartWorkloadRequest): Promise<api.RestartWorkloadResponse> {
    const id = requireId(request.workloadId);
    const reboot = request.mode === api.RestartMode.RESTART_MODE_REBOOT;
    await this.update(id, (record) => {
      const workload = workloadOf(record);
      const replicas = workload.replicas ?? 1;
      if (reboot && workload.desiredState === api.DesiredState.DESIRED_STATE_STOPPED) {
        throw new PersysError("CONFLICT", `workload ${id} is stopped; start it instead of rebooting it`);
      }
      if (request.replicaIndex !== undefined && (request.replicaIndex < 0 || request.replicaIndex >= replicas)) {
        throw invalid("INVALID_ARGUMENT", [{ path: "replicaIndex", reason: `must be 0..${replicas - 1}` }]);
      }
      const bumped = (nonces: Readonly<Record<string, number>> | undefined) => {
        const next = { ...(nonces ?? {}) };
        next[String(request.replicaIndex)] = (next[String(request.replicaIndex)] ?? 0) + 1;
        return next;
      };
      const updatedAt = this.now();
      if (reboot) {
        return request.replicaIndex === undefined
          ? { ...record, rebootNonce: (record.rebootNonce ?? 0) + 1, updatedAt }
          : { ...record, replicaRebootNonces: bumped(record.replicaRebootNonces), updatedAt };
      }
      return request.replicaIndex === undefined
        ? { ...record, restartNonce: (record.restartNonce ?? 0) + 1, updatedAt }
        : { ...record, replicaRestartNonces: bumped(record.replicaRestartNonces), updatedAt };
    });
    return { workload: this.view(id) };
  }

  /** Tries failed and pending replicas again now, terminal failures included. */
  async retry(request: api.RetryWorkloadRequest): Promise<api.RetryWorkloadResponse> {
    const id = requireId(request.workloadId);
    const before = this.view(id, false);
    const retried = (before.status?.replicas ?? [])
      .filter(
        (r) => r.state === api.ReplicaState.REPLICA_STATE_FAILED || r.state === api.ReplicaState.REPLICA_STATE_PENDING,
      )
      .map((r) => r.index)
      .filter((index) => request.replicaIndex === undefined || index === request.replicaIndex);
    await this.update(id, (record) => ({ ...record, retryNonce: (record.retryNonce ?? 0) + 1, updatedAt: this.now() }));
    return { workload: this.view(id), retriedReplicas: retried };
  }

  /**
   * Asks the leader to move one placed replica off its node (see `MoveReplica` in
   * workload_service.proto). Checks now, with the scheduler, that another node could take it
   * (UNSCHEDULABLE otherwise, and nothing is written); the leader then decides again when it moves
   * it. Idempotent: the same move under way, or a `fromNode` the replica has left, returns
   * `moved: false`.
   */
  async move(request: api.MoveReplicaRequest, identity?: string): Promise<api.MoveReplicaResponse> {
    const id = requireId(request.workloadId);
    const held = this.o.state.workloads.get(id);
    if (!held) throw notFound(id);
    if (held.value.deletionRequestedAt) throw new PersysError("CONFLICT", `workload ${id} is being deleted`);
    const count = workloadOf(held.value).replicas ?? 1;
    const index = request.replicaIndex;
    if (!Number.isInteger(index) || index < 0 || index >= count) {
      throw invalid("INVALID_ARGUMENT", [{ path: "replicaIndex", reason: `must be 0..${count - 1}` }]);
    }
    const a = this.o.state.assignment(id, index)?.value;
    const unchanged = (fromNode: string): api.MoveReplicaResponse => ({
      workload: this.view(id),
      moved: false,
      fromNode,
    });
    if (request.fromNode && a?.nodeId !== request.fromNode) return unchanged(request.fromNode);
    if (!a) {
      throw invalid("INVALID_ARGUMENT", [
        { path: "replicaIndex", reason: `replica ${index} is not placed on any node: nothing to move` },
      ]);
    }
    if (request.toNode) {
      if (!this.o.state.nodes.has(request.toNode)) {
        throw new PersysError("NOT_FOUND", `node ${request.toNode} not found`, {
          details: [{ path: "toNode", reason: "no such node" }],
        });
      }
      if (request.toNode === a.nodeId) {
        throw invalid("INVALID_ARGUMENT", [{ path: "toNode", reason: `is the node replica ${index} is on` }]);
      }
    }
    if (moveApplies(held.value.replicaMoves?.[String(index)], a)) return unchanged(a.nodeId);
    const move = { leaving: [a.nodeId], ...(request.toNode ? { target: request.toNode } : {}) };
    const decision = this.o.view.decideMove(held.value, a, move, false);
    const diagnosis = apiDiagnosis(decision.diagnosis, workloadOf(held.value));
    if (!decision.nodeId) {
      throw new PersysError(
        "UNSCHEDULABLE",
        `replica ${index} of ${id} cannot move off ${a.nodeId}: ${diagnosis.message}`,
        {
          details: [{ path: request.toNode ? "toNode" : "replicaIndex", reason: diagnosis.message }],
        },
      );
    }
    const reason = request.reason || "requested";
    await this.update(id, (record) => {
      if (record.deletionRequestedAt) throw new PersysError("CONFLICT", `workload ${id} is being deleted`);
      return {
        ...record,
        replicaMoves: {
          ...(record.replicaMoves ?? {}),
          [String(index)]: {
            fromNode: a.nodeId,
            fromPlacedAt: a.placedAt,
            ...(request.toNode ? { toNode: request.toNode } : {}),
            reason,
            requestedAt: this.now(),
            ...(identity ? { by: identity } : {}),
          },
        },
        updatedAt: this.now(),
      };
    });
    return { workload: this.view(id), moved: true, fromNode: a.nodeId, diagnosis };
  }

  explain(request: api.ExplainWorkloadRequest): api.ExplainWorkloadResponse {
    const id = requireId(request.workloadId);
    const held = this.o.state.workloads.get(id);
    if (!held) throw notFound(id);
    const count = workloadOf(held.value).replicas ?? 1;
    const replicas: api.ReplicaExplanation[] = [];
    for (let index = 0; index < count; index++) {
      const status = replicaStatus(this.o.state, held.value, id, index, true);
      replicas.push({
        replicaIndex: index,
        state: status.state,
        nodeId: status.nodeId,
        ...(status.reason ? { reason: status.reason } : {}),
        ...(status.placement ? { diagnosis: status.placement } : {}),
      });
    }
    return { workloadId: id, revision: held.value.revision, replicas };
  }

  /** Where the workload would go and why, computed by the scheduler without writing anything. */
  plan(request: api.PlanWorkloadRequest): api.PlanWorkloadResponse {
    if (!request.workload) throw invalid("INVALID_ARGUMENT", [{ path: "workload", reason: "is required" }]);
    const workload = assertValidWorkload(withDefaults(request.workload));
    const revision = defaultedWorkloadRevision(workload);
    const held: Versioned<WorkloadRecord> | undefined = this.o.state.workloads.get(workload.id);
    const existing = held?.value;
    const result = this.o.view.plan(workload);
    const decisions = new Map(result.decisions.map((d) => [d.replica, d]));
    const count = workload.replicas ?? 1;
    const replicas: api.ReplicaPlan[] = [];
    for (let index = 0; index < count; index++) {
      const assignment = this.o.state.assignment(workload.id, index)?.value;
      const decision = decisions.get(index);
      if (assignment) {
        replicas.push({
          replicaIndex: index,
          action:
            existing?.revision === revision ? api.PlanAction.PLAN_ACTION_KEEP : api.PlanAction.PLAN_ACTION_REPLACE,
          nodeId: assignment.nodeId,
          diagnosis: api.PlacementDiagnosis.fromJSON(assignment.diagnosis),
        });
      } else if (decision) {
        replicas.push({
          replicaIndex: index,
          action: api.PlanAction.PLAN_ACTION_CREATE,
          nodeId: decision.nodeId ?? "",
          diagnosis: apiDiagnosis(decision.diagnosis, workload),
        });
      }
    }
    for (const index of this.o.state.replicaIndexes(workload.id)) {
      if (index >= count)
        replicas.push({
          replicaIndex: index,
          action: api.PlanAction.PLAN_ACTION_DELETE,
          nodeId: this.o.state.assignment(workload.id, index)?.value.nodeId ?? "",
        });
    }
    const changed = !existing || inputJson(workloadOf(existing)) !== inputJson(workload);
    return {
      workload: { ...workload, status: undefined },
      revision,
      changed,
      replicas,
      schedulable: replicas.every((r) => r.action !== api.PlanAction.PLAN_ACTION_CREATE || r.nodeId !== ""),
    };
  }
}
