import {
  api,
  assertValidWorkload,
  type FieldViolation,
  invalid,
  MAX_APPLY_WORKLOADS,
  PersysError,
  withDefaults,
  workloadViolations,
} from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";
import { PagedList, type WorkloadPage } from "../client/paged-list.js";
import {
  kindInput,
  stateInput,
  viewInput,
  type WorkloadKindName,
  type WorkloadStateName,
  type WorkloadViewName,
} from "../enums/enum-inputs.js";
import type { EventsApi, ListEventsOptions, WatchEventsOptions } from "../events/events-api.js";
import { type WaitOptions, type WaitTarget, waitForWorkload } from "./wait-for.js";
import { type WatchWorkloadsOptions, type WorkloadWatchEvent, watchWorkloads } from "./workload-watch.js";

/** Options of {@link WorkloadsApi.apply}. */
export interface ApplyOptions extends CallOptions {
  /**
   * Optimistic concurrency: apply only if the stored revision equals this (CONFLICT otherwise).
   * `""`: the workload must not exist yet (ALREADY_EXISTS otherwise).
   */
  readonly expectedRevision?: string | undefined;
}

/** What {@link WorkloadsApi.apply} did. */
export interface ApplyResult {
  /** The stored workload with its current status. */
  readonly workload: api.Workload;
  /** False when the stored workload already had exactly this spec (nothing was written). */
  readonly changed: boolean;
  /** True when the workload did not exist before. */
  readonly created: boolean;
}

/** Filters and paging of {@link WorkloadsApi.list}; every set filter must hold. */
export interface ListWorkloadsOptions extends CallOptions {
  readonly kind?: api.WorkloadKind | WorkloadKindName | undefined;
  readonly state?: api.WorkloadState | WorkloadStateName | undefined;
  /** Workloads with at least one replica on this node. */
  readonly nodeId?: string | undefined;
  /** Kubernetes-style selector on workload labels: `k=v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`. */
  readonly labelSelector?: string | undefined;
  /** Workloads per page (the server's default 100, at most 1000). */
  readonly pageSize?: number | undefined;
  /** `full` includes each replica's placement diagnosis. Default `basic`. */
  readonly view?: api.WorkloadView | WorkloadViewName | undefined;
}

/** Options of {@link WorkloadsApi.logs}. */
export interface LogsOptions extends CallOptions {
  /** One replica only. Unset: every replica, interleaved. */
  readonly replicaIndex?: number | undefined;
  /** Keep streaming new lines. */
  readonly follow?: boolean | undefined;
  /** Start with the last N lines of each replica. */
  readonly tailLines?: number | undefined;
  /** Only lines written at or after this time. */
  readonly since?: Date | undefined;
  /** Compose only: one service. */
  readonly service?: string | undefined;
}

/** What {@link WorkloadsApi.retry} did. */
export interface RetryResult {
  readonly workload: api.Workload;
  /** Replicas whose retry backoff was cleared. */
  readonly retriedReplicas: readonly number[];
}

const missing = (what: string) => new PersysError("INTERNAL", `the server sent no ${what}`);

/**
 * Workloads: apply, read, list, watch, wait for, explain, plan, control and remove them.
 * Every method validates its input before any network call, retries retryable errors with
 * backoff (never INVALID_SPEC), and rejects with a `PersysError`.
 */
export class WorkloadsApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.WorkloadServiceClient,
    private readonly eventsApi: EventsApi,
  ) {}

  /**
   * Creates the workload or updates the one with the same id. Idempotent: applying an unchanged
   * spec writes nothing and returns `changed: false`. The spec is validated locally first (with
   * defaults applied, as the server does); an invalid one rejects with INVALID_SPEC naming every bad
   * field and is never sent. `status` is ignored.
   */
  async apply(workload: api.Workload, options: ApplyOptions = {}): Promise<ApplyResult> {
    assertValidWorkload(withDefaults(workload));
    const request = api.ApplyWorkloadRequest.fromPartial({
      workload: { ...workload, status: undefined },
      ...(options.expectedRevision === undefined ? {} : { expectedRevision: options.expectedRevision }),
    });
    const response = await this.runner.unary<api.ApplyWorkloadResponse>(
      (md, o, cb) => this.client.applyWorkload(request, md, o, cb),
      { ...options, conditional: options.expectedRevision !== undefined },
    );
    if (!response.workload) throw missing("workload");
    return { workload: response.workload, changed: response.changed, created: response.created };
  }

  /**
   * Applies several workloads in one call (at most 1,000, `MAX_APPLY_WORKLOADS`), all or nothing on bad
   * input: each is validated locally first and an invalid one rejects with INVALID_SPEC naming
   * `workloads[i].<field>` before anything is sent; the server checks all of them (kind changes,
   * deletions under way, the dangerous-spec policy) before it writes any. Each is applied as
   * {@link WorkloadsApi.apply} would, idempotently; results are in the given order, each with the
   * stored workload in the basic view.
   */
  async applyMany(workloads: readonly api.Workload[], options: CallOptions = {}): Promise<ApplyResult[]> {
    if (workloads.length > MAX_APPLY_WORKLOADS) {
      throw invalid("INVALID_ARGUMENT", [
        { path: "workloads", reason: `has ${workloads.length} workloads; at most ${MAX_APPLY_WORKLOADS} per call` },
      ]);
    }
    const violations: FieldViolation[] = [];
    workloads.forEach((workload, i) => {
      for (const v of workloadViolations(withDefaults(workload)))
        violations.push({ ...v, path: `workloads[${i}].${v.path}` });
    });
    if (violations.length > 0) throw invalid("INVALID_SPEC", violations, "workloads");
    const request = api.ApplyWorkloadsRequest.fromPartial({
      workloads: workloads.map((w) => ({ ...w, status: undefined })),
    });
    const response = await this.runner.unary<api.ApplyWorkloadsResponse>(
      (md, o, cb) => this.client.applyWorkloads(request, md, o, cb),
      options,
    );
    if (response.results.length !== workloads.length) throw missing("result for every workload");
    return response.results.map((r) => {
      if (!r.workload) throw missing("workload");
      return { workload: r.workload, changed: r.changed, created: r.created };
    });
  }

  /** The workload with its full status (view `full` unless asked otherwise). Rejects with NOT_FOUND when it does not exist. */
  async get(
    id: string,
    options: CallOptions & { view?: api.WorkloadView | WorkloadViewName | undefined } = {},
  ): Promise<api.Workload> {
    const request = { workloadId: id, view: viewInput(options.view ?? "full") };
    const response = await this.runner.unary<api.GetWorkloadResponse>(
      (md, o, cb) => this.client.getWorkload(request, md, o, cb),
      options,
    );
    if (!response.workload) throw missing("workload");
    return response.workload;
  }

  /** Like {@link WorkloadsApi.get}, but resolves with `undefined` instead of rejecting with NOT_FOUND. */
  async find(
    id: string,
    options: CallOptions & { view?: api.WorkloadView | WorkloadViewName | undefined } = {},
  ): Promise<api.Workload | undefined> {
    try {
      return await this.get(id, options);
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }

  /**
   * Workloads matching every filter, ordered by id, fetched page by page as you iterate
   * (`for await (const w of client.workloads.list({ kind: "container" }))`). Each page carries the
   * store revision it was read at, to {@link WorkloadsApi.watch} from.
   *
   * @throws PersysError INVALID_ARGUMENT at once (before any call) for an unknown kind, state or view name.
   */
  list(options: ListWorkloadsOptions = {}): PagedList<api.Workload, WorkloadPage<api.Workload>> {
    const base = {
      kind: kindInput(options.kind),
      state: stateInput(options.state),
      nodeId: options.nodeId ?? "",
      labelSelector: options.labelSelector ?? "",
      pageSize: options.pageSize ?? 0,
      view: viewInput(options.view),
    };
    return new PagedList(async (pageToken) => {
      const response = await this.runner.unary<api.ListWorkloadsResponse>(
        (md, o, cb) => this.client.listWorkloads({ ...base, pageToken }, md, o, cb),
        options,
      );
      return {
        items: response.workloads,
        nextPageToken: response.nextPageToken,
        storeRevision: response.storeRevision,
      };
    });
  }

  /**
   * Starts removal of every replica; the workload disappears once all are gone (wait with
   * `waitFor(id, "deleted")`). Resolves with the workload in state DELETING, or `undefined` when it did
   * not exist and `allowMissing` is set (otherwise NOT_FOUND). A retried call that finds the
   * workload already gone resolves with `undefined`.
   */
  async delete(
    id: string,
    options: CallOptions & { allowMissing?: boolean | undefined } = {},
  ): Promise<api.Workload | undefined> {
    let retried = false;
    try {
      const response = await this.runner.unary<api.DeleteWorkloadResponse>(
        (md, o, cb) =>
          this.client.deleteWorkload({ workloadId: id, allowMissing: options.allowMissing ?? false }, md, o, cb),
        {
          ...options,
          onRetry: () => {
            retried = true;
          },
        },
      );
      return response.workload;
    } catch (error) {
      if (retried && error instanceof PersysError && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }

  /** Sets the desired state to RUNNING. Idempotent (a no-op when already running). */
  async start(id: string, options: CallOptions = {}): Promise<api.Workload> {
    const response = await this.runner.unary<api.StartWorkloadResponse>(
      (md, o, cb) => this.client.startWorkload({ workloadId: id }, md, o, cb),
      options,
    );
    if (!response.workload) throw missing("workload");
    return response.workload;
  }

  /** Sets the desired state to STOPPED; replicas keep their nodes. Idempotent. */
  async stop(id: string, options: CallOptions = {}): Promise<api.Workload> {
    const response = await this.runner.unary<api.StopWorkloadResponse>(
      (md, o, cb) => this.client.stopWorkload({ workloadId: id }, md, o, cb),
      options,
    );
    if (!response.workload) throw missing("workload");
    return response.workload;
  }

  /**
   * Restarts the replicas in place (one replica with `replicaIndex`), honouring the update strategy:
   * recreates their runtime objects at the same revision, or with `reboot: true` reboots them where
   * they run (a VM guest through ACPI — reset when it ignores that — in the same QEMU process with
   * the same disks; a container by `docker restart`). A reboot of a stopped workload fails with
   * CONFLICT. Not idempotent: a call retried after a lost answer may restart twice.
   *
   * ```ts
   * await client.workloads.restart("db", { reboot: true, replicaIndex: 0 });
   * ```
   */
  async restart(
    id: string,
    options: CallOptions & { replicaIndex?: number | undefined; reboot?: boolean | undefined } = {},
  ): Promise<api.Workload> {
    const request = api.RestartWorkloadRequest.fromPartial({
      workloadId: id,
      replicaIndex: options.replicaIndex,
      mode: options.reboot ? api.RestartMode.RESTART_MODE_REBOOT : api.RestartMode.RESTART_MODE_RECREATE,
    });
    const response = await this.runner.unary<api.RestartWorkloadResponse>(
      (md, o, cb) => this.client.restartWorkload(request, md, o, cb),
      options,
    );
    if (!response.workload) throw missing("workload");
    return response.workload;
  }

  /** Clears the retry backoff of failed or pending replicas (or of one) so they are retried now. */
  async retry(id: string, options: CallOptions & { replicaIndex?: number | undefined } = {}): Promise<RetryResult> {
    const request = api.RetryWorkloadRequest.fromPartial({ workloadId: id, replicaIndex: options.replicaIndex });
    const response = await this.runner.unary<api.RetryWorkloadResponse>(
      (md, o, cb) => this.client.retryWorkload(request, md, o, cb),
      options,
    );
    if (!response.workload) throw missing("workload");
    return { workload: response.workload, retriedReplicas: response.retriedReplicas };
  }

  /**
   * Moves one replica off its node: the control plane's scheduler places it elsewhere (never on
   * the node it leaves; only on `toNode` when given), assigns it, then stops the old copy; the new
   * placement's diagnosis says it was moved and why. Idempotent with `fromNode`: once the replica
   * has left that node (or the same move is under way), the call changes nothing and returns
   * `moved: false`.
   *
   * @throws PersysError UNSCHEDULABLE when no other node could take it (nothing changes),
   *   NOT_FOUND for an unknown workload or `toNode`, INVALID_ARGUMENT naming `replicaIndex`.
   */
  async move(
    id: string,
    replicaIndex: number,
    options: CallOptions & { fromNode?: string; toNode?: string; reason?: string } = {},
  ): Promise<api.MoveReplicaResponse> {
    const request = api.MoveReplicaRequest.fromPartial({
      workloadId: id,
      replicaIndex,
      fromNode: options.fromNode ?? "",
      toNode: options.toNode ?? "",
      reason: options.reason ?? "",
    });
    return this.runner.unary<api.MoveReplicaResponse>(
      (md, o, cb) => this.client.moveReplica(request, md, o, cb),
      options,
    );
  }

  /** The latest placement decision of every replica: node, state, reason and the scheduler's diagnosis. */
  async explain(id: string, options: CallOptions = {}): Promise<api.ExplainWorkloadResponse> {
    return this.runner.unary<api.ExplainWorkloadResponse>(
      (md, o, cb) => this.client.explainWorkload({ workloadId: id }, md, o, cb),
      options,
    );
  }

  /**
   * Dry run of {@link WorkloadsApi.apply}: validates the workload (locally first) and runs the
   * scheduler on the current cluster without writing. `schedulable` says whether every replica
   * that needs a node would get one; each replica carries its diagnosis.
   */
  async plan(workload: api.Workload, options: CallOptions = {}): Promise<api.PlanWorkloadResponse> {
    assertValidWorkload(withDefaults(workload));
    const request = api.PlanWorkloadRequest.fromPartial({ workload: { ...workload, status: undefined } });
    return this.runner.unary<api.PlanWorkloadResponse>(
      (md, o, cb) => this.client.planWorkload(request, md, o, cb),
      options,
    );
  }

  /**
   * Replica log lines (container output, VM serial console), interleaved by replica unless
   * `replicaIndex` is given; with `follow` the iteration continues as lines are written. Breaking
   * out of the loop or aborting `signal` ends the stream. A dropped connection ends it with
   * UNAVAILABLE (logs are not resumed: a resumed stream could repeat lines).
   */
  async *logs(id: string, options: LogsOptions = {}): AsyncGenerator<api.StreamWorkloadLogsResponse, void, undefined> {
    const request = api.StreamWorkloadLogsRequest.fromPartial({
      workloadId: id,
      replicaIndex: options.replicaIndex,
      follow: options.follow ?? false,
      tailLines: options.tailLines,
      since: options.since,
      service: options.service ?? "",
    });
    yield* this.runner.stream<api.StreamWorkloadLogsResponse>(
      (md, o) => this.client.streamWorkloadLogs(request, md, o),
      options.signal,
    );
  }

  /**
   * Changes of workloads (spec or status) as they happen, resumable across dropped connections and
   * server restarts without losing or repeating a change. It resumes after the last store revision
   * delivered; when the server no longer has that history (COMPACTED) it lists the matching workloads
   * again and reports the difference (`added`, `modified`, `deleted`) before watching on. A change
   * whose workload equals the last one delivered for its id is not delivered again; bookmarks only
   * move the cursor. Ends when `signal` aborts; throws errors that reconnecting cannot fix.
   */
  watch(options: WatchWorkloadsOptions = {}): AsyncGenerator<WorkloadWatchEvent, void, undefined> {
    return watchWorkloads({ runner: this.runner, client: this.client }, options);
  }

  /**
   * The events of one workload: recorded ones (oldest first), or with `follow` a live, resumable
   * stream of new ones (see {@link EventsApi.watch}).
   */
  events(
    id: string,
    options:
      | (Omit<ListEventsOptions, "workloadId"> & { follow?: false })
      | (Omit<WatchEventsOptions, "workloadId"> & { follow: true }) = {},
  ): AsyncIterable<api.Event> {
    return options.follow
      ? this.eventsApi.watch({ ...options, workloadId: id })
      : this.eventsApi.list({ ...options, workloadId: id });
  }

  /**
   * Waits until the workload reaches a state (`"running"`, `api.WorkloadState.WORKLOAD_STATE_STOPPED`,
   * ...), is deleted (`"deleted"`, resolving with `undefined`), or satisfies a predicate; resolves with
   * the workload. Rejects with a {@link WaitError} carrying the last status and the diagnosis when the
   * timeout (default 5 minutes) passes, when a replica fails in a way Persys will not retry
   * (IMAGE_NOT_FOUND, PORT_CONFLICT, ...; any failure with `failFast`), or when the workload is
   * deleted; with NOT_FOUND when it does not exist; with CANCELLED when `signal` aborts.
   */
  waitFor(id: string, target: "deleted", options?: WaitOptions): Promise<undefined>;
  waitFor(id: string, target: Exclude<WaitTarget, "deleted">, options?: WaitOptions): Promise<api.Workload>;
  waitFor(id: string, target: WaitTarget, options: WaitOptions = {}): Promise<api.Workload | undefined> {
    return waitForWorkload(
      {
        find: (workloadId, signal) => this.find(workloadId, { signal, view: "basic" }),
        watch: (o) => this.watch(o),
        explain: (workloadId, signal) => this.explain(workloadId, { signal }),
      },
      id,
      target,
      options,
    );
  }
}
