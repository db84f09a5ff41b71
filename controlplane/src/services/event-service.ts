import { api, invalid } from "@persys/schema";
import { apiEvent, EVENTS_STREAM, workloadStream } from "../cluster/event-recorder.js";
import type { EventStore, StoredEvent } from "../events/event-store.js";
import { pageSize } from "../workloads/label-selector-query.js";

const severityRank = (s: api.EventSeverity) => (s === api.EventSeverity.EVENT_SEVERITY_UNSPECIFIED ? 0 : s);

function matcher(filter: api.EventFilter | undefined): (event: api.Event) => boolean {
  if (!filter) return () => true;
  const types = new Set(filter.types);
  return (event) =>
    (!filter.workloadId || event.workloadId === filter.workloadId) &&
    (!filter.nodeId || event.nodeId === filter.nodeId) &&
    (types.size === 0 || types.has(event.type)) &&
    severityRank(event.severity) >= severityRank(filter.minSeverity);
}

const streamOf = (filter: api.EventFilter | undefined) =>
  filter?.workloadId ? workloadStream(filter.workloadId) : EVENTS_STREAM;

/** Events from the event store: paged reads and live, resumable watches. */
export class EventService {
  constructor(private readonly events: EventStore) {}

  async list(request: api.ListEventsRequest): Promise<api.ListEventsResponse> {
    const size = pageSize(request.pageSize, { default: 200, max: 1000 });
    const matches = matcher(request.filter);
    const out: api.Event[] = [];
    let afterId = request.pageToken || undefined;
    for (let scans = 0; scans < 20 && out.length < size; scans++) {
      const batch: StoredEvent[] = await this.events.read(streamOf(request.filter), {
        ...(afterId ? { afterId } : {}),
        ...(request.since ? { fromMs: request.since.getTime() } : {}),
        limit: 1000,
      });
      for (const stored of batch) {
        const event = apiEvent(stored);
        if (matches(event)) out.push(event);
        afterId = stored.id;
        if (out.length === size) break;
      }
      if (batch.length < 1000) return { events: out, nextPageToken: out.length === size ? (afterId ?? "") : "" };
    }
    return { events: out, nextPageToken: afterId ?? "" };
  }

  /** Live events after `afterEventId` (or from now), filtered; ends when `signal` aborts. */
  async *watch(request: api.WatchEventsRequest, signal: AbortSignal): AsyncIterable<api.WatchEventsResponse> {
    if (request.afterEventId && !/^\d+-\d+$/.test(request.afterEventId)) {
      throw invalid("INVALID_ARGUMENT", [
        { path: "afterEventId", reason: "must be an event id such as 1733000000000-0" },
      ]);
    }
    const matches = matcher(request.filter);
    const subscription = await this.events.subscribe(streamOf(request.filter), {
      ...(request.afterEventId ? { afterId: request.afterEventId } : {}),
      signal,
    });
    try {
      for await (const stored of subscription) {
        const event = apiEvent(stored);
        if (matches(event)) yield { event };
      }
    } finally {
      await subscription.close();
    }
  }
}
