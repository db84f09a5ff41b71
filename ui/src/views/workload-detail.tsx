import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiClient, ApiError, query } from "../api/api-client.js";
import type {
  EventJson,
  ExplainWorkloadResponseJson,
  ListEventsResponseJson,
  LogLineJson,
  WatchEventsResponseJson,
  WorkloadJson,
} from "../api/wire-types.js";
import { ErrorBox } from "../components/error-box.js";
import { useStore } from "../components/hooks.js";
import { navigate, routePath } from "../components/router.js";
import { ScrollRegion } from "../components/scroll-region.js";
import type { ClusterStore } from "../model/cluster-store.js";
import { enumLabel, stateTone, time } from "../model/format.js";
import { specToYaml } from "../model/spec-text.js";
import { DiagnosisPanel } from "./diagnosis-panel.js";
import { EventRow } from "./events-view.js";

const LOG_LIMIT = 2000;

/** One workload: spec, replicas with typed reasons, diagnosis grid, event timeline, logs and VM console. */
export function WorkloadDetail({ id, api, store }: { id: string; api: ApiClient; store: ClusterStore }) {
  useStore(store);
  const [workload, setWorkload] = useState<WorkloadJson>();
  const [explain, setExplain] = useState<ExplainWorkloadResponseJson>();
  const [error, setError] = useState<ApiError>();
  const [replica, setReplica] = useState(0);
  const [busy, setBusy] = useState("");
  const listed = store.workloads.get(id);
  useEffect(() => {
    const abort = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const [got, why] = await Promise.all([
          api.get<{ workload: WorkloadJson }>(`/v1/workloads/${encodeURIComponent(id)}`, abort.signal),
          api.get<ExplainWorkloadResponseJson>(`/v1/workloads/${encodeURIComponent(id)}/explain`, abort.signal),
        ]);
        setWorkload(got.workload);
        setExplain(why);
        setError(undefined);
      } catch (e) {
        if (!abort.signal.aborted && ApiError.is(e)) setError(e);
      }
    }, 150);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [id, listed]);
  const action = async (name: "start" | "stop" | "restart" | "delete") => {
    if (name === "delete" && !confirm(`Delete workload ${id}?`)) return;
    setBusy(name);
    try {
      if (name === "delete") await api.request("DELETE", `/v1/workloads/${encodeURIComponent(id)}`);
      else await api.request("POST", `/v1/workloads/${encodeURIComponent(id)}/${name}`, {});
      setError(undefined);
    } catch (e) {
      if (ApiError.is(e)) setError(e);
    } finally {
      setBusy("");
    }
  };
  if (!workload) {
    return (
      <section class="view" aria-labelledby="wl-title">
        <h1 id="wl-title">{id}</h1>
        {error ? <ErrorBox error={error} /> : <p class="muted">Loading…</p>}
      </section>
    );
  }
  const status = workload.status;
  const explanation = explain?.replicas?.find((r) => (r.replicaIndex ?? 0) === replica);
  const diagnosis = explanation?.diagnosis ?? status?.replicas?.find((r) => (r.index ?? 0) === replica)?.placement;
  const isVm = workload.kind === "WORKLOAD_KIND_VM";
  return (
    <section class="view" aria-labelledby="wl-title">
      <div class="view-head">
        <h1 id="wl-title">
          {workload.id}{" "}
          <span class={`badge ${stateTone(status?.state)}`} data-testid="workload-state">
            {enumLabel(status?.state, "WORKLOAD_STATE_")}
          </span>
        </h1>
        <p class="muted">
          {enumLabel(workload.kind, "WORKLOAD_KIND_")} · desired {enumLabel(workload.desiredState, "DESIRED_STATE_")} ·{" "}
          {status?.readyReplicas ?? 0}/{workload.replicas ?? 1} ready · revision {status?.revision?.slice(0, 12)}
        </p>
        <div class="actions">
          {(["start", "stop", "restart", "delete"] as const).map((a) => (
            <button type="button" key={a} disabled={busy !== ""} onClick={() => action(a)}>
              {a[0]!.toUpperCase() + a.slice(1)}
            </button>
          ))}
          <a
            class="button"
            href={routePath({ view: "plan", from: id })}
            onClick={(e) => {
              e.preventDefault();
              navigate(routePath({ view: "plan", from: id }));
            }}
          >
            Edit in plan
          </a>
        </div>
        <ErrorBox error={error} />
      </div>
      <div class="columns">
        <section aria-labelledby="replicas-title">
          <h2 id="replicas-title">Replicas</h2>
          <table class="replicas">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">node</th>
                <th scope="col">state</th>
                <th scope="col">reason</th>
                <th scope="col">restarts</th>
                <th scope="col">endpoints</th>
              </tr>
            </thead>
            <tbody>
              {(status?.replicas ?? []).map((r) => (
                <tr key={r.index ?? 0} class={(r.index ?? 0) === replica ? "selected" : ""}>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-pressed={(r.index ?? 0) === replica}
                      onClick={() => setReplica(r.index ?? 0)}
                      aria-label={`Show the diagnosis of replica ${r.index ?? 0}`}
                    >
                      {r.index ?? 0}
                    </button>
                  </td>
                  <td>{r.nodeId || "—"}</td>
                  <td>
                    <span class={`badge ${stateTone(r.state)}`} data-testid={`replica-state-${r.index ?? 0}`}>
                      {enumLabel(r.state, "REPLICA_STATE_")}
                    </span>
                  </td>
                  <td>
                    {r.reason?.code ? <code>{r.reason.code}</code> : null} {r.reason?.message}
                    {r.reason?.nextRetryAt ? <span class="muted"> · retry {time(r.reason.nextRetryAt)}</span> : null}
                  </td>
                  <td>{r.restartCount ?? 0}</td>
                  <td>
                    {(r.endpoints ?? []).map((e) => `${e.address}${e.port ? `:${e.port}` : ""}`).join(", ") || "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Spec</h2>
          <ScrollRegion label="Spec (YAML)">
            <pre class="spec">{specToYaml(workload)}</pre>
          </ScrollRegion>
        </section>
        <WorkloadEvents api={api} id={id} />
      </div>
      <DiagnosisPanel
        diagnosis={diagnosis}
        title={`Replica ${replica}${explanation?.nodeId ? ` on ${explanation.nodeId}` : ""}`}
      />
      <LogPanel api={api} id={id} console={false} />
      {isVm ? <LogPanel api={api} id={id} console={true} /> : null}
    </section>
  );
}

/** The workload's event timeline: the recorded events, then live ones. */
function WorkloadEvents({ api, id }: { api: ApiClient; id: string }) {
  const [events, setEvents] = useState<EventJson[]>([]);
  useEffect(() => {
    const abort = new AbortController();
    const seen = new Set<string>();
    const add = (list: EventJson[]) => {
      const fresh = list.filter((e) => !seen.has(e.id));
      for (const e of fresh) seen.add(e.id);
      if (fresh.length) setEvents((old) => [...old, ...fresh].slice(-500));
    };
    setEvents([]);
    (async () => {
      try {
        const page = await api.get<ListEventsResponseJson>(
          `/v1/workloads/${encodeURIComponent(id)}/events${query({ pageSize: 500 })}`,
          abort.signal,
        );
        add(page.events ?? []);
      } catch {
        // the watch below still shows new events
      }
      await api.stream<WatchEventsResponseJson>(`/v1/watch/events${query({ workloadId: id })}`, {
        signal: abort.signal,
        onData: (item) => item.event && add([item.event]),
      });
    })();
    return () => abort.abort();
  }, [id]);
  return (
    <section aria-labelledby="timeline-title" class="timeline">
      <h2 id="timeline-title">Events</h2>
      <ScrollRegion label="Event timeline, newest first">
        <ol data-testid="workload-events">
          {[...events].reverse().map((e) => (
            <li key={e.id}>
              <EventRow event={e} />
            </li>
          ))}
        </ol>
      </ScrollRegion>
      {events.length === 0 ? <p class="muted">No events yet.</p> : null}
    </section>
  );
}

/** Logs (follow) of every replica, or the VM serial console (`LOG_STREAM_CONSOLE` lines). */
function LogPanel({ api, id, console: consoleOnly }: { api: ApiClient; id: string; console: boolean }) {
  const [lines, setLines] = useState<LogLineJson[]>([]);
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<ApiError>();
  const ref = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const abort = new AbortController();
    setLines([]);
    let pending: LogLineJson[] = [];
    let flush: ReturnType<typeof setTimeout> | undefined;
    void api.stream<LogLineJson>(`/v1/workloads/${encodeURIComponent(id)}/logs${query({ follow, tailLines: 500 })}`, {
      signal: abort.signal,
      reconnect: false,
      onData: (line) => {
        if (consoleOnly !== (line.stream === "LOG_STREAM_CONSOLE")) return;
        pending.push(line);
        flush ??= setTimeout(() => {
          const batch = pending;
          pending = [];
          flush = undefined;
          setLines((old) => [...old, ...batch].slice(-LOG_LIMIT));
        }, 100);
      },
      onError: setError,
    });
    return () => {
      clearTimeout(flush);
      abort.abort();
    };
  }, [id, follow]);
  useEffect(() => {
    const el = ref.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [lines]);
  const title = consoleOnly ? "VM console log" : "Logs";
  return (
    <section aria-label={title} class="logs">
      <h2>
        {title}{" "}
        <label class="inline">
          <input
            type="checkbox"
            checked={follow}
            onChange={(e) => setFollow((e.currentTarget as HTMLInputElement).checked)}
          />{" "}
          follow
        </label>
      </h2>
      {error && error.status !== 200 ? <ErrorBox error={error} title="Log stream" /> : null}
      <ScrollRegion label={`${title} lines`}>
        <pre ref={ref} data-testid={consoleOnly ? "console-log" : "logs"}>
          {lines
            .map(
              (l) =>
                `${l.replicaIndex ?? 0}${l.service ? `/${l.service}` : ""} ${l.stream === "LOG_STREAM_STDERR" ? "!" : "|"} ${l.line ?? ""}`,
            )
            .join("\n")}
        </pre>
      </ScrollRegion>
    </section>
  );
}
