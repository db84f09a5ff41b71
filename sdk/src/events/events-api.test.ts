import { api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import type { CallRunner } from "../client/call-runner.js";
import { EventsApi } from "./events-api.js";

const event = (id: string) => api.Event.fromPartial({ id, type: "X" });

/** Fake transport: the n-th watch yields `sessions[n]`; list answers `listed`; records requests. */
function eventsApi(sessions: { items: string[]; error?: PersysError }[], listed: string[] = []) {
  const watchedFrom: string[] = [];
  const listedSince: (Date | undefined)[] = [];
  let call = 0;
  const runner = {
    unary: async (invoke: (md: unknown, o: unknown, cb: (e: unknown, r: unknown) => void) => unknown) =>
      new Promise((resolve) => invoke(undefined, undefined, (_e, r) => resolve(r))),
    async *stream(open: (md: unknown, o: unknown) => unknown) {
      open(undefined, undefined);
      const session = sessions[call++] ?? { items: [] };
      for (const id of session.items) yield { event: event(id) };
      if (session.error) throw session.error;
      await new Promise(() => {});
    },
  };
  const client = {
    watchEvents: (request: api.WatchEventsRequest) => watchedFrom.push(request.afterEventId),
    listEvents: (
      request: api.ListEventsRequest,
      _md: unknown,
      _o: unknown,
      cb: (e: unknown, r: api.ListEventsResponse) => void,
    ) => {
      listedSince.push(request.since);
      cb(null, { events: listed.map(event), nextPageToken: "" });
    },
  };
  const started = new Date("2026-01-01T00:00:00Z");
  const events = new EventsApi(
    runner as unknown as CallRunner,
    client as unknown as api.EventServiceClient,
    async () => started,
  );
  return { events, watchedFrom, listedSince, started };
}

async function take(iterable: AsyncIterable<api.Event>, n: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of iterable) {
    out.push(e.id);
    if (out.length === n) break;
  }
  return out;
}

describe("EventsApi.watch", () => {
  it("resumes after the last event id and drops anything not after it", async () => {
    const { events, watchedFrom } = eventsApi([
      { items: ["5-0", "5-1"], error: new PersysError("UNAVAILABLE", "dropped") },
      { items: ["5-1", "5-10", "6-0"] },
    ]);
    expect(await take(events.watch(), 4)).toEqual(["5-0", "5-1", "5-10", "6-0"]);
    expect(watchedFrom).toEqual(["", "5-1"]);
  });

  it("catches up by listing since it started when it broke before the first event", async () => {
    const { events, watchedFrom, listedSince, started } = eventsApi(
      [{ items: [], error: new PersysError("CANCELLED", "server shutting down") }, { items: ["9-0", "9-1"] }],
      ["8-0", "9-0"],
    );
    expect(await take(events.watch(), 3)).toEqual(["8-0", "9-0", "9-1"]);
    expect(listedSince).toEqual([started]);
    expect(watchedFrom).toEqual(["", "9-0"]);
  });

  it("ends with COMPACTED: events trimmed meanwhile cannot be delivered", async () => {
    const { events } = eventsApi([{ items: [], error: new PersysError("COMPACTED", "trimmed") }]);
    await expect(take(events.watch({ afterEventId: "1-0" }), 1)).rejects.toMatchObject({ code: "COMPACTED" });
  });
});
