import { api } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";
import { PagedList } from "../client/paged-list.js";
import { resumable, type StreamOptions } from "../client/resumable-stream.js";
import { type EventSeverityName, severityInput } from "../enums/enum-inputs.js";

/** Which events: every set filter must hold. */
export interface EventFilterInput {
  readonly workloadId?: string | undefined;
  readonly nodeId?: string | undefined;
  /** Event types to include, e.g. `["ReplicaPlaced", "ReplicaFailed"]`. Empty: all. */
  readonly types?: readonly string[] | undefined;
  /** Only events of at least this severity. */
  readonly minSeverity?: api.EventSeverity | EventSeverityName | undefined;
}

/** Options of {@link EventsApi.list}. */
export interface ListEventsOptions extends EventFilterInput, CallOptions {
  /** Only events at or after this time. */
  readonly since?: Date | undefined;
  /** Events per page (the server's default 100, at most 1000). */
  readonly pageSize?: number | undefined;
}

/** Options of {@link EventsApi.watch}. */
export interface WatchEventsOptions extends EventFilterInput, StreamOptions {
  /** Start after this event id. Unset: only events recorded from now on. */
  readonly afterEventId?: string | undefined;
}

function filterOf(input: EventFilterInput): api.EventFilter {
  return {
    workloadId: input.workloadId ?? "",
    nodeId: input.nodeId ?? "",
    types: [...(input.types ?? [])],
    minSeverity: severityInput(input.minSeverity),
  };
}

const idPattern = /^(\d+)-(\d+)$/;

/** Whether event id `a` is after `b`; ids are `<ms>-<seq>`, any other form compares as different. */
function isAfter(a: string, b: string): boolean {
  const x = idPattern.exec(a);
  const y = idPattern.exec(b);
  if (!x || !y) return a !== b;
  const [xm, xs, ym, ys] = [BigInt(x[1]!), BigInt(x[2]!), BigInt(y[1]!), BigInt(y[2]!)];
  return xm > ym || (xm === ym && xs > ys);
}

/** Operational events: what the scheduler, reconciler and agents did. */
export class EventsApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.EventServiceClient,
    private readonly serverTime: (signal?: AbortSignal) => Promise<Date | undefined>,
  ) {}

  /** Recorded events matching the filter, oldest first, fetched page by page as you iterate. */
  list(options: ListEventsOptions = {}): PagedList<api.Event> {
    const filter = filterOf(options);
    return new PagedList(async (pageToken) => {
      const response = await this.runner.unary<api.ListEventsResponse>(
        (md, o, cb) =>
          this.client.listEvents(
            api.ListEventsRequest.fromPartial({
              filter,
              since: options.since,
              pageSize: options.pageSize ?? 0,
              pageToken,
            }),
            md,
            o,
            cb,
          ),
        options,
      );
      return { items: response.events, nextPageToken: response.nextPageToken };
    });
  }

  /**
   * Follows events as they are recorded, in id order. After a dropped connection or a server
   * restart it resumes after the last event delivered, so none is lost or repeated (an event trimmed
   * by retention meanwhile is gone: the watch then fails with COMPACTED). Before the first event
   * arrives there is no id to resume from: the watch then catches up by listing the events recorded
   * since it started (by the server's clock), and resumes after the last of them.
   * Ends when `signal` aborts; throws non-resumable errors (INVALID_ARGUMENT, COMPACTED, ...).
   */
  watch(options: WatchEventsOptions = {}): AsyncGenerator<api.Event, void, undefined> {
    const filter = filterOf(options);
    let lastId = options.afterEventId ?? "";
    let startedAt: Date | undefined;
    const self = this;
    async function* session(): AsyncGenerator<api.Event> {
      if (!lastId) {
        if (startedAt) {
          for await (const event of self.list({ ...options, since: startedAt, signal: options.signal })) {
            lastId = event.id;
            yield event;
          }
        } else {
          startedAt = await self.serverTime(options.signal);
        }
      }
      const stream = self.runner.stream<api.WatchEventsResponse>(
        (md, o) => self.client.watchEvents(api.WatchEventsRequest.fromPartial({ filter, afterEventId: lastId }), md, o),
        options.signal,
      );
      for await (const response of stream) {
        const event = response.event;
        if (!event) continue;
        if (lastId && !isAfter(event.id, lastId)) continue;
        lastId = event.id;
        yield event;
      }
    }
    return resumable(session, options);
  }
}
