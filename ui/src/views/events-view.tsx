import { useMemo, useState } from "preact/hooks";
import type { EventJson } from "../api/wire-types.js";
import { useStore } from "../components/hooks.js";
import { linkClick, routePath } from "../components/router.js";
import { VirtualList } from "../components/virtual-list.js";
import type { ClusterStore } from "../model/cluster-store.js";
import { type EventFilter, emptyEventFilter, filterEvents } from "../model/event-filters.js";
import { enumLabel, time } from "../model/format.js";

/** One event on one line: time, severity, type, subject and message. */
export function EventRow({ event }: { event: EventJson }) {
  const severity = enumLabel(event.severity, "EVENT_SEVERITY_");
  return (
    <div class="event-row" data-event-type={event.type}>
      <time dateTime={event.time}>{time(event.time)}</time>
      <span class={`badge sev-${severity}`}>{severity}</span>
      <code>{event.type}</code>
      <span class="ellipsis">
        {event.workloadId ? (
          <a href={routePath({ view: "workload", id: event.workloadId })} onClick={linkClick}>
            {event.workloadId}
            {event.replicaIndex !== undefined ? `#${event.replicaIndex}` : ""}
          </a>
        ) : null}
        {event.nodeId ? <span class="muted"> @{event.nodeId}</span> : null} {event.message}
        {event.code ? <code class="bad"> {event.code}</code> : null}
      </span>
    </div>
  );
}

/** The live event stream of the cluster (the last 5,000), filterable, newest first; pause to read. */
export function EventsView({ store }: { store: ClusterStore }) {
  const version = useStore(store);
  const [filter, setFilter] = useState<EventFilter>(emptyEventFilter);
  const [paused, setPaused] = useState<EventJson[] | undefined>();
  const source = paused ?? store.events;
  const list = useMemo(() => filterEvents(source, filter), [paused ? paused : version, filter]);
  const set = (field: keyof EventFilter) => (e: Event) =>
    setFilter({ ...filter, [field]: (e.currentTarget as HTMLInputElement).value });
  return (
    <section class="view" aria-labelledby="events-title">
      <div class="view-head">
        <h1 id="events-title">Events</h1>
        <form class="filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
          <label class="field">
            <span>Type</span>
            <input type="search" value={filter.type} placeholder="replica." onInput={set("type")} />
          </label>
          <label class="field">
            <span>Severity</span>
            <select value={filter.minSeverity} onChange={set("minSeverity")}>
              <option value="">all</option>
              <option value="EVENT_SEVERITY_INFO">info and worse</option>
              <option value="EVENT_SEVERITY_WARNING">warning and worse</option>
              <option value="EVENT_SEVERITY_ERROR">error</option>
            </select>
          </label>
          <label class="field">
            <span>Workload</span>
            <input type="search" value={filter.workload} onInput={set("workload")} />
          </label>
          <label class="field">
            <span>Node</span>
            <input type="search" value={filter.node} onInput={set("node")} />
          </label>
          <label class="field">
            <span>Message</span>
            <input type="search" value={filter.text} onInput={set("text")} />
          </label>
          <button
            type="button"
            onClick={() => setPaused(paused ? undefined : [...store.events])}
            aria-pressed={!!paused}
          >
            {paused ? "Resume" : "Pause"}
          </button>
        </form>
        <p class="muted" aria-live="polite">
          {list.length} events{paused ? " (paused)" : " (live)"}
        </p>
      </div>
      <VirtualList
        count={list.length}
        rowHeight={32}
        label="Events, newest first"
        className="table-list"
        renderRow={(i) => <EventRow event={list[i]!} />}
      />
    </section>
  );
}
