// Streaming REST routes on a real server (127.0.0.1, free port): SSE watches resumable with
// Last-Event-ID, heartbeats, cancellation on disconnect, errors before and after the first event,
// and logs as NDJSON or SSE.
import { api, PersysError } from "@persys/schema";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningRestServer, startRestServer } from "../../controlplane/src/api/rest/index.js";
import { FakeHealth, FakePersysApi, sampleWorkload } from "./support/fake-persys-api.js";

let server: RunningRestServer;
let core: FakePersysApi;

beforeAll(async () => {
  core = new FakePersysApi();
  server = await startRestServer({
    api: core,
    health: new FakeHealth(),
    sseHeartbeatMs: 40,
    streamFirstItemWaitMs: 50,
  });
});
afterAll(() => server.close());

beforeEach(() => {
  core.calls.length = 0;
  core.compactedThrough = 0;
  core.logFailure = undefined;
  core.workloads.set("web", sampleWorkload("web"));
  core.watchHistory.length = 0;
  core.watchHistory.push(
    { type: api.WatchEventType.WATCH_EVENT_TYPE_ADDED, workload: sampleWorkload("web"), storeRevision: 101 },
    { type: api.WatchEventType.WATCH_EVENT_TYPE_MODIFIED, workload: sampleWorkload("web"), storeRevision: 102 },
  );
  core.logLines = [
    api.StreamWorkloadLogsResponse.fromPartial({
      replicaIndex: 0,
      stream: api.LogStream.LOG_STREAM_STDOUT,
      line: "listening on :80",
      time: new Date("2025-01-02T03:04:05.000Z"),
    }),
    api.StreamWorkloadLogsResponse.fromPartial({
      replicaIndex: 1,
      stream: api.LogStream.LOG_STREAM_STDERR,
      line: "warn: slow",
      nodeId: "node-1",
    }),
  ];
});

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Reads server-sent events from a fetch response until `until` says stop, then aborts the request. */
async function readSse(
  response: Response,
  until: (events: SseEvent[]) => boolean,
  abort?: AbortController,
): Promise<SseEvent[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = "";
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: SseEvent = {};
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) event.comment = line.slice(1).trim();
        else {
          const [field, ...rest] = line.split(": ");
          (event as Record<string, string>)[field!] = rest.join(": ");
        }
      }
      events.push(event);
      end = buffer.indexOf("\n\n");
    }
  }
  abort?.abort();
  await reader.cancel().catch(() => {});
  return events;
}

const dataEvents = (events: SseEvent[]) => events.filter((e) => e.data !== undefined);

describe("GET /v1/watch/workloads", () => {
  it("streams every change with its store revision as the event id", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/watch/workloads`, { signal: abort.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const events = await readSse(response, (e) => dataEvents(e).length >= 2, abort);
    expect(dataEvents(events).map((e) => [e.id, (JSON.parse(e.data!) as { type: string }).type])).toEqual([
      ["101", "WATCH_EVENT_TYPE_ADDED"],
      ["102", "WATCH_EVENT_TYPE_MODIFIED"],
    ]);
    expect(JSON.parse(dataEvents(events)[0]!.data!)).toEqual(api.WatchWorkloadsResponse.toJSON(core.watchHistory[0]!));
  });

  it.each([
    { name: "Last-Event-ID", url: "/v1/watch/workloads", headers: { "last-event-id": "101" } },
    { name: "the afterStoreRevision parameter", url: "/v1/watch/workloads?afterStoreRevision=101", headers: {} },
    {
      name: "Last-Event-ID over a stale parameter",
      url: "/v1/watch/workloads?afterStoreRevision=5",
      headers: { "last-event-id": "101" },
    },
  ] as { name: string; url: string; headers: Record<string, string> }[])(
    "resumes after $name, then follows live changes",
    async ({ url, headers }) => {
      const abort = new AbortController();
      const response = await fetch(`${server.url}${url}`, { headers, signal: abort.signal });
      const events = await readSse(
        response,
        (e) => {
          if (dataEvents(e).length === 1) {
            core.liveWorkloads.publish({
              type: api.WatchEventType.WATCH_EVENT_TYPE_DELETED,
              workload: sampleWorkload("web"),
              storeRevision: 103,
            });
          }
          return dataEvents(e).length >= 2;
        },
        abort,
      );
      expect(dataEvents(events).map((e) => e.id)).toEqual(["102", "103"]);
      expect((core.lastCall("watchWorkloads")!.request as api.WatchWorkloadsRequest).afterStoreRevision).toBe(101);
    },
  );

  it("sends heartbeat comments while idle", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/watch/workloads?afterStoreRevision=102`, { signal: abort.signal });
    const events = await readSse(response, (e) => e.filter((x) => x.comment === "heartbeat").length >= 2, abort);
    expect(dataEvents(events)).toEqual([]);
  });

  it("stops the core's stream when the client goes away", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/watch/workloads`, { signal: abort.signal });
    await readSse(response, (e) => dataEvents(e).length >= 2, abort);
    const ctx = core.lastCall("watchWorkloads")!.ctx;
    await expect.poll(() => ctx.signal.aborted).toBe(true);
    await expect.poll(() => core.liveWorkloads.listeners).toBe(0);
  });

  it("answers a compacted revision with 410 and the error body, not a 200 stream", async () => {
    core.compactedThrough = 50;
    const response = await fetch(`${server.url}/v1/watch/workloads?afterStoreRevision=10`);
    expect(response.status).toBe(410);
    expect(await response.json()).toMatchObject({ code: "COMPACTED", retryable: false });
  });
});

describe("GET /v1/watch/events", () => {
  it("resumes after an event id and uses event ids as SSE ids", async () => {
    core.events.length = 0;
    core.events.push(
      api.Event.fromPartial({ id: "e1", type: "workload.applied" }),
      api.Event.fromPartial({ id: "e2", type: "replica.placed", severity: api.EventSeverity.EVENT_SEVERITY_INFO }),
    );
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/watch/events?workloadId=web&types=replica.placed`, {
      headers: { "last-event-id": "e1" },
      signal: abort.signal,
    });
    const events = await readSse(response, (e) => dataEvents(e).length >= 1, abort);
    expect(dataEvents(events).map((e) => [e.id, JSON.parse(e.data!)])).toEqual([
      ["e2", { event: { id: "e2", type: "replica.placed", severity: "EVENT_SEVERITY_INFO" } }],
    ]);
    expect(core.lastCall("watchEvents")?.request).toEqual({
      filter: { workloadId: "web", nodeId: "", types: ["replica.placed"], minSeverity: 0 },
      afterEventId: "e1",
    });
  });

  it("answers an expired event id with 410", async () => {
    const response = await fetch(`${server.url}/v1/watch/events`, { headers: { "last-event-id": "expired" } });
    expect(response.status).toBe(410);
  });
});

describe("GET /v1/workloads/{id}/logs", () => {
  it("streams NDJSON by default and ends with the logs", async () => {
    const response = await fetch(`${server.url}/v1/workloads/web/logs?tailLines=2`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const lines = (await response.text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(core.logLines.map((l) => api.StreamWorkloadLogsResponse.toJSON(l)));
    expect(core.lastCall("streamWorkloadLogs")?.request).toMatchObject({
      workloadId: "web",
      tailLines: 2,
      follow: false,
    });
  });

  it("streams server-sent events when asked, and follows", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/workloads/web/logs?follow=true&replicaIndex=1`, {
      headers: { accept: "text/event-stream" },
      signal: abort.signal,
    });
    const events = await readSse(
      response,
      (e) => {
        if (dataEvents(e).length === 2)
          core.liveLogs.publish(api.StreamWorkloadLogsResponse.fromPartial({ line: "new line" }));
        return dataEvents(e).length >= 3;
      },
      abort,
    );
    expect(dataEvents(events).map((e) => (JSON.parse(e.data!) as { line: string }).line)).toEqual([
      "listening on :80",
      "warn: slow",
      "new line",
    ]);
    expect(core.lastCall("streamWorkloadLogs")?.request).toMatchObject({ follow: true, replicaIndex: 1 });
  });

  it("answers a missing workload with 404", async () => {
    const response = await fetch(`${server.url}/v1/workloads/nope/logs`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND" });
  });

  it.each([
    {
      format: "NDJSON",
      accept: "application/x-ndjson",
      last: (text: string) => JSON.parse(text.trimEnd().split("\n").at(-1)!),
    },
    {
      format: "SSE",
      accept: "text/event-stream",
      last: (text: string) => {
        const block = text.trimEnd().split("\n\n").at(-1)!;
        expect(block.split("\n")[0]).toBe("event: error");
        return { error: JSON.parse(block.split("\n")[1]!.slice("data: ".length)) };
      },
    },
  ])("ends a $format stream that fails midway with the error as the last record", async ({ accept, last }) => {
    core.logFailure = new PersysError("NODE_LOST", "node-1 stopped heartbeating");
    const response = await fetch(`${server.url}/v1/workloads/web/logs`, { headers: { accept } });
    expect(response.status).toBe(200);
    expect(last(await response.text())).toEqual({ error: core.logFailure.toBody() });
  });
});

describe("shutdown", () => {
  it("ends open streams when the server closes", async () => {
    const other = await startRestServer({ api: core, health: new FakeHealth() });
    const response = await fetch(`${other.url}/v1/watch/workloads`);
    const reading = readSse(response, () => false);
    await expect.poll(() => core.liveWorkloads.listeners).toBeGreaterThan(0);
    await other.close();
    await expect(reading).resolves.toBeDefined();
  });
});
