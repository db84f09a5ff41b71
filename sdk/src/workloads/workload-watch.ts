import { createHash } from "node:crypto";
import { api, type PersysError } from "@persys/schema";
import type { CallRunner } from "../client/call-runner.js";
import { isResumableStreamError, resumable, type StreamOptions } from "../client/resumable-stream.js";
import { kindInput, viewInput, type WorkloadKindName, type WorkloadViewName } from "../enums/enum-inputs.js";

/** What to watch: every set filter must hold. */
export interface WatchWorkloadsOptions extends StreamOptions {
  /** One workload only. */
  readonly workloadId?: string | undefined;
  readonly kind?: api.WorkloadKind | WorkloadKindName | undefined;
  /** Kubernetes-style selector on workload labels, e.g. `app=web,tier!=db`. */
  readonly labelSelector?: string | undefined;
  /**
   * Start after this store revision (from {@link WorkloadPage.storeRevision} or a previous event).
   * Unset or 0: first an `added` event for every current match, then live changes.
   */
  readonly afterStoreRevision?: number | undefined;
  /** `full` includes each replica's placement diagnosis. Default `basic`. */
  readonly view?: api.WorkloadView | WorkloadViewName | undefined;
}

/** One change seen by a workload watch. */
export interface WorkloadWatchEvent {
  readonly type: "added" | "modified" | "deleted";
  /** The workload after the change; for `deleted`, the last state before removal. */
  readonly workload: api.Workload;
  /** Resume point: pass as `afterStoreRevision` to continue after this event. */
  readonly storeRevision: number;
}

const typeNames = {
  [api.WatchEventType.WATCH_EVENT_TYPE_ADDED]: "added",
  [api.WatchEventType.WATCH_EVENT_TYPE_MODIFIED]: "modified",
  [api.WatchEventType.WATCH_EVENT_TYPE_DELETED]: "deleted",
} as const;

/** Everything a watch needs from the client. Internal. */
export interface WatchTransport {
  readonly runner: CallRunner;
  readonly client: api.WorkloadServiceClient;
}

/** A content fingerprint of a workload view, independent of map order. */
function fingerprint(workload: api.Workload): string {
  return createHash("sha1")
    .update(canonical(api.Workload.toJSON(workload)))
    .digest("base64");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * A workload watch that survives dropped connections and server restarts without losing or
 * repeating changes. It resumes after the last store revision it delivered; when the server no
 * longer has that history (COMPACTED, e.g. another server or a long outage) it lists the matching
 * workloads at a new revision, reports the difference to what it had delivered (`added`,
 * `modified`, `deleted`), and watches on from there. A watch from revision 0 reports each
 * workload's first appearance as `added`, also when it was created while the connection was down.
 * A change whose workload view equals the last one delivered for that id is not delivered again.
 * Bookmarks only move the cursor.
 */
export function watchWorkloads(
  t: WatchTransport,
  options: WatchWorkloadsOptions,
): AsyncGenerator<WorkloadWatchEvent, void, undefined> {
  const request = {
    workloadId: options.workloadId ?? "",
    kind: kindInput(options.kind),
    labelSelector: options.labelSelector ?? "",
    view: viewInput(options.view),
  };
  const known = new Map<string, { print: string; workload: api.Workload }>();
  const gone = new Set<string>();
  const fromRevision = (options.afterStoreRevision ?? 0) > 0;
  let cursor = options.afterStoreRevision ?? 0;
  const deliver = (
    type: WorkloadWatchEvent["type"],
    workload: api.Workload,
    storeRevision: number,
  ): WorkloadWatchEvent | undefined => {
    const id = workload.id;
    if (type === "deleted") {
      if (gone.has(id)) return undefined;
      gone.add(id);
      const wasKnown = known.delete(id);
      return wasKnown || fromRevision ? { type, workload, storeRevision } : undefined;
    }
    gone.delete(id);
    const print = fingerprint(workload);
    const before = known.get(id);
    if (before?.print === print) return undefined;
    known.set(id, { print, workload });
    // First sight of an id is "added" (a watch from revision 0 has seen every match; on resume the
    // server reports workloads created meanwhile as modified); a known id is "modified".
    const first = !before && !fromRevision;
    return { type: before ? "modified" : first ? "added" : type, workload, storeRevision };
  };

  async function* relist(): AsyncGenerator<WorkloadWatchEvent> {
    let revision = 0;
    const seen = new Set<string>();
    let token = "";
    do {
      const page = await t.runner.unary<api.ListWorkloadsResponse>(
        (md, o, cb) =>
          t.client.listWorkloads(
            api.ListWorkloadsRequest.fromPartial({
              kind: request.kind,
              labelSelector: request.labelSelector,
              view: request.view,
              pageSize: 1000,
              pageToken: token,
            }),
            md,
            o,
            cb,
          ),
        { signal: options.signal },
      );
      if (revision === 0) revision = page.storeRevision;
      for (const workload of page.workloads) {
        if (request.workloadId && workload.id !== request.workloadId) continue;
        seen.add(workload.id);
        const event = deliver("added", workload, revision);
        if (event) yield event;
      }
      token = page.nextPageToken;
    } while (token);
    for (const [id, last] of [...known]) {
      if (seen.has(id)) continue;
      const event = deliver("deleted", last.workload, revision);
      if (event) yield event;
    }
    cursor = revision;
  }

  async function* session(previous: PersysError | undefined): AsyncGenerator<WorkloadWatchEvent> {
    if (previous?.code === "COMPACTED") yield* relist();
    const stream = t.runner.stream<api.WatchWorkloadsResponse>(
      (md, o) =>
        t.client.watchWorkloads(
          api.WatchWorkloadsRequest.fromPartial({ ...request, afterStoreRevision: cursor }),
          md,
          o,
        ),
      options.signal,
    );
    for await (const response of stream) {
      const type = typeNames[response.type as keyof typeof typeNames];
      if (response.storeRevision > cursor) cursor = response.storeRevision;
      if (!type || !response.workload) continue;
      const event = deliver(type, response.workload, response.storeRevision);
      if (event) yield event;
    }
  }

  return resumable(session, {
    ...options,
    resumable: (error) => error.code === "COMPACTED" || isResumableStreamError(error),
  });
}
