import { type ApiClient, ApiError, query } from "../api/api-client.js";
import type {
  EventJson,
  ListNodesResponseJson,
  ListWorkloadsResponseJson,
  NodeJson,
  WatchEventsResponseJson,
  WatchWorkloadsResponseJson,
  WorkloadJson,
} from "../api/wire-types.js";

/** How many recent events the store keeps for the events view. */
export const EVENT_BUFFER = 5000;

type Listener = () => void;

/**
 * The console's picture of the cluster: every node and workload by id, and the recent events, kept
 * current by the workload watch (SSE), the event watch and a node poll. Changes are applied in place
 * and listeners are told at most once per animation frame, so a burst of 10,000 watch events costs
 * one render. Unchanged objects keep their identity, so memoised cards do not re-render.
 */
export class ClusterStore {
  readonly nodes = new Map<string, NodeJson>();
  readonly workloads = new Map<string, WorkloadJson>();
  events: EventJson[] = [];
  nodesLoaded = false;
  workloadsLoaded = false;
  /** Grows on every change; views memoise on it. */
  version = 0;
  /** Grows when the node set changes (views that show only nodes memoise on it). */
  nodesVersion = 0;
  /** The last failure of a background read, shown in the header; cleared by the next success. */
  error: ApiError | undefined;
  private readonly nodeJson = new Map<string, string>();
  private readonly eventIds = new Set<string>();
  private readonly listeners = new Set<Listener>();
  private scheduled = false;

  constructor(private readonly schedule: (fn: () => void) => void = defaultSchedule) {}

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Replaces the node set; returns whether anything changed. Unchanged nodes keep their object.
   * `partial`: a first page of the initial load, drawn at once; nothing is removed.
   */
  replaceNodes(list: readonly NodeJson[], partial = false): boolean {
    let changed = list.length !== this.nodes.size;
    const seen = new Set<string>();
    for (const node of list) {
      seen.add(node.id);
      const json = JSON.stringify(node);
      if (this.nodeJson.get(node.id) === json) continue;
      this.nodeJson.set(node.id, json);
      this.nodes.set(node.id, node);
      changed = true;
    }
    for (const id of partial ? [] : [...this.nodes.keys()]) {
      if (!seen.has(id)) {
        this.nodes.delete(id);
        this.nodeJson.delete(id);
      }
    }
    if (partial) changed = true;
    else if (!this.nodesLoaded) changed = true;
    if (!partial) this.nodesLoaded = true;
    if (changed) {
      this.nodesVersion++;
      this.changed();
    }
    return changed;
  }

  /** Applies one workload watch event (ADDED, MODIFIED, DELETED; BOOKMARK changes nothing). */
  applyWorkloadEvent(event: WatchWorkloadsResponseJson): void {
    const w = event.workload;
    if (!w?.id) return;
    if (event.type === "WATCH_EVENT_TYPE_DELETED") this.workloads.delete(w.id);
    else this.workloads.set(w.id, w);
    this.changed();
  }

  /** Adds workloads read by a list (one page). */
  addWorkloads(list: readonly WorkloadJson[]): void {
    for (const w of list) this.workloads.set(w.id, w);
    this.changed();
  }

  /** Appends events (oldest first), keeping the last EVENT_BUFFER; an id seen already is skipped. */
  addEvents(list: readonly EventJson[]): void {
    const fresh = list.filter((e) => !this.eventIds.has(e.id));
    if (fresh.length === 0) return;
    for (const e of fresh) this.eventIds.add(e.id);
    let next = this.events.concat(fresh);
    if (next.length > EVENT_BUFFER) {
      const dropped = next.slice(0, next.length - EVENT_BUFFER);
      for (const e of dropped) this.eventIds.delete(e.id);
      next = next.slice(next.length - EVENT_BUFFER);
    }
    this.events = next;
    this.changed();
  }

  /** Marks a change and tells listeners on the next frame. */
  changed(): void {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      for (const listener of this.listeners) listener();
    });
  }

  /**
   * Loads everything and keeps it current until `signal` aborts: nodes (all pages, then every
   * `nodePollMs` and on node events), workloads (all pages, then the watch from the list's revision;
   * a COMPACTED watch lists again), events (the last 15 minutes, then the watch).
   */
  async start(api: ApiClient, signal: AbortSignal, nodePollMs = 5000): Promise<void> {
    const refreshNodes = throttle(() => this.loadNodes(api, signal), 500);
    void this.loadNodes(api, signal);
    const poll = setInterval(() => void this.loadNodes(api, signal), nodePollMs);
    signal.addEventListener("abort", () => clearInterval(poll), { once: true });
    void this.followWorkloads(api, signal);
    void this.followEvents(api, signal, (e) => {
      if (e.type?.startsWith("node.") || e.type?.startsWith("replica.")) refreshNodes();
    });
  }

  async loadNodes(api: ApiClient, signal: AbortSignal): Promise<void> {
    try {
      const all: NodeJson[] = [];
      let token = "";
      // The first load starts with a small page, so the first cards are drawn before the rest arrive.
      let size = this.nodesLoaded ? 1000 : 100;
      do {
        const page = await api.get<ListNodesResponseJson>(
          `/v1/nodes${query({ pageSize: size, pageToken: token })}`,
          signal,
        );
        all.push(...(page.nodes ?? []));
        token = page.nextPageToken ?? "";
        if (token && !this.nodesLoaded) this.replaceNodes(all, true);
        size = 1000;
      } while (token && !signal.aborted);
      this.replaceNodes(all);
      this.clearError();
    } catch (thrown) {
      this.fail(thrown, signal);
    }
  }

  private async followWorkloads(api: ApiClient, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let revision = 0;
      try {
        this.workloads.clear();
        let token = "";
        do {
          const page = await api.get<ListWorkloadsResponseJson>(
            `/v1/workloads${query({ pageSize: 1000, pageToken: token, view: "WORKLOAD_VIEW_BASIC" })}`,
            signal,
          );
          if (!revision) revision = page.storeRevision ?? 0;
          this.addWorkloads(page.workloads ?? []);
          token = page.nextPageToken ?? "";
        } while (token && !signal.aborted);
        this.workloadsLoaded = true;
        this.changed();
        this.clearError();
      } catch (thrown) {
        this.fail(thrown, signal);
        await pause(3000, signal);
        continue;
      }
      let relist = false;
      await api.stream<WatchWorkloadsResponseJson>(
        `/v1/watch/workloads${query({ afterStoreRevision: revision || undefined, view: "WORKLOAD_VIEW_BASIC" })}`,
        {
          signal,
          onData: (event) => this.applyWorkloadEvent(event),
          onError: (error) => {
            if (error.code === "COMPACTED") relist = true;
            else this.fail(error, signal);
          },
          reconnect: false,
        },
      );
      if (!relist) await pause(1000, signal);
    }
  }

  private async followEvents(api: ApiClient, signal: AbortSignal, onEvent: (e: EventJson) => void): Promise<void> {
    try {
      const since = new Date(Date.now() - 15 * 60_000).toISOString();
      let token = "";
      let pages = 0;
      do {
        const page = await api.get<{ events?: EventJson[]; nextPageToken?: string }>(
          `/v1/events${query({ since, pageSize: 1000, pageToken: token })}`,
          signal,
        );
        this.addEvents(page.events ?? []);
        token = page.nextPageToken ?? "";
      } while (token && ++pages < 10 && !signal.aborted);
    } catch (thrown) {
      this.fail(thrown, signal);
    }
    const after = this.events.at(-1)?.id;
    await api.stream<WatchEventsResponseJson>(`/v1/watch/events${query({ afterEventId: after })}`, {
      signal,
      onData: (item) => {
        if (!item.event) return;
        this.addEvents([item.event]);
        onEvent(item.event);
      },
      onError: (error) => this.fail(error, signal),
    });
  }

  private fail(thrown: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.error = ApiError.is(thrown)
      ? thrown
      : new ApiError(0, { code: "UNKNOWN", message: thrown instanceof Error ? thrown.message : String(thrown) });
    this.changed();
  }

  private clearError(): void {
    if (!this.error) return;
    this.error = undefined;
    this.changed();
  }
}

function defaultSchedule(fn: () => void): void {
  const raf = (globalThis as { requestAnimationFrame?: (cb: () => void) => void }).requestAnimationFrame;
  if (raf) raf(fn);
  else setTimeout(fn, 16);
}

function throttle(fn: () => unknown, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
