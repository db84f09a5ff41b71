import { api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import type { CallRunner } from "../client/call-runner.js";
import { type WatchTransport, type WorkloadWatchEvent, watchWorkloads } from "./workload-watch.js";

const T = api.WatchEventType;
const w = (id: string, state: api.WorkloadState) => api.Workload.fromPartial({ id, status: { state } });
const S = api.WorkloadState;

/**
 * A transport whose n-th watch call yields `sessions[n]` (items, then an optional error), and whose
 * list answers `listed`. Records the afterStoreRevision of each watch call.
 */
function transport(
  sessions: { items: api.WatchWorkloadsResponse[]; error?: PersysError }[],
  listed: api.Workload[] = [],
) {
  const cursors: number[] = [];
  let call = 0;
  const runner = {
    unary: async () => ({ workloads: listed, nextPageToken: "", storeRevision: 50 }),
    async *stream(open: (md: unknown, o: unknown) => unknown) {
      open(undefined, undefined);
      const session = sessions[call++] ?? { items: [] };
      for (const item of session.items) yield item;
      if (session.error) throw session.error;
      await new Promise(() => {});
    },
  };
  const client = {
    watchWorkloads: (request: api.WatchWorkloadsRequest) => cursors.push(request.afterStoreRevision),
  };
  return {
    t: {
      runner: runner as unknown as CallRunner,
      client: client as unknown as api.WorkloadServiceClient,
    } as WatchTransport,
    cursors,
  };
}

async function take(iterable: AsyncIterable<WorkloadWatchEvent>, n: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of iterable) {
    out.push(`${e.type} ${e.workload.id} ${api.WorkloadState[e.workload.status?.state ?? 0]} @${e.storeRevision}`);
    if (out.length === n) break;
  }
  return out;
}

describe("watchWorkloads", () => {
  it("resumes after the last store revision, dropping repeats and moving the cursor on bookmarks", async () => {
    const { t, cursors } = transport([
      {
        items: [
          { type: T.WATCH_EVENT_TYPE_ADDED, workload: w("a", S.WORKLOAD_STATE_PENDING), storeRevision: 5 },
          { type: T.WATCH_EVENT_TYPE_BOOKMARK, workload: undefined, storeRevision: 7 },
        ],
        error: new PersysError("UNAVAILABLE", "connection dropped"),
      },
      {
        items: [
          { type: T.WATCH_EVENT_TYPE_MODIFIED, workload: w("a", S.WORKLOAD_STATE_PENDING), storeRevision: 8 },
          { type: T.WATCH_EVENT_TYPE_MODIFIED, workload: w("a", S.WORKLOAD_STATE_RUNNING), storeRevision: 9 },
        ],
      },
    ]);
    const events = await take(watchWorkloads(t, {}), 2);
    expect(events).toEqual(["added a WORKLOAD_STATE_PENDING @5", "modified a WORKLOAD_STATE_RUNNING @9"]);
    expect(cursors).toEqual([0, 7]);
  });

  it("reports a workload first seen after a reconnect as added", async () => {
    const { t } = transport([
      {
        items: [{ type: T.WATCH_EVENT_TYPE_ADDED, workload: w("a", S.WORKLOAD_STATE_RUNNING), storeRevision: 5 }],
        error: new PersysError("CANCELLED", "server shutting down"),
      },
      { items: [{ type: T.WATCH_EVENT_TYPE_MODIFIED, workload: w("b", S.WORKLOAD_STATE_PENDING), storeRevision: 9 }] },
    ]);
    expect(await take(watchWorkloads(t, {}), 2)).toEqual([
      "added a WORKLOAD_STATE_RUNNING @5",
      "added b WORKLOAD_STATE_PENDING @9",
    ]);
  });

  it("lists again after COMPACTED and reports the difference, then watches from the list's revision", async () => {
    const { t, cursors } = transport(
      [
        {
          items: [
            { type: T.WATCH_EVENT_TYPE_ADDED, workload: w("a", S.WORKLOAD_STATE_PENDING), storeRevision: 3 },
            { type: T.WATCH_EVENT_TYPE_ADDED, workload: w("b", S.WORKLOAD_STATE_RUNNING), storeRevision: 3 },
          ],
          error: new PersysError("COMPACTED", "too old"),
        },
        {
          items: [{ type: T.WATCH_EVENT_TYPE_MODIFIED, workload: w("c", S.WORKLOAD_STATE_RUNNING), storeRevision: 51 }],
        },
      ],
      [w("a", S.WORKLOAD_STATE_RUNNING), w("c", S.WORKLOAD_STATE_PENDING)],
    );
    const events = await take(watchWorkloads(t, {}), 6);
    expect(events).toEqual([
      "added a WORKLOAD_STATE_PENDING @3",
      "added b WORKLOAD_STATE_RUNNING @3",
      "modified a WORKLOAD_STATE_RUNNING @50",
      "added c WORKLOAD_STATE_PENDING @50",
      "deleted b WORKLOAD_STATE_RUNNING @50",
      "modified c WORKLOAD_STATE_RUNNING @51",
    ]);
    expect(cursors).toEqual([0, 50]);
  });

  it("ends with errors that reconnecting cannot fix, and with reconnect: false", async () => {
    const bad = transport([{ items: [], error: new PersysError("INVALID_ARGUMENT", "bad selector") }]);
    await expect(take(watchWorkloads(bad.t, {}), 1)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const once = transport([{ items: [], error: new PersysError("UNAVAILABLE", "gone") }]);
    await expect(take(watchWorkloads(once.t, { reconnect: false }), 1)).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});
