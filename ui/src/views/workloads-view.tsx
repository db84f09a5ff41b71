import { useMemo, useState } from "preact/hooks";
import { useStore } from "../components/hooks.js";
import { navigate, routePath } from "../components/router.js";
import { VirtualList } from "../components/virtual-list.js";
import type { ClusterStore } from "../model/cluster-store.js";
import { enumLabel, stateTone } from "../model/format.js";
import { emptyFilter, filterWorkloads, parseLabelTerms, type WorkloadFilter } from "../model/workload-filters.js";

const kinds = ["WORKLOAD_KIND_CONTAINER", "WORKLOAD_KIND_COMPOSE", "WORKLOAD_KIND_VM"];
const states = [
  "WORKLOAD_STATE_PENDING",
  "WORKLOAD_STATE_PROGRESSING",
  "WORKLOAD_STATE_RUNNING",
  "WORKLOAD_STATE_DEGRADED",
  "WORKLOAD_STATE_STOPPED",
  "WORKLOAD_STATE_FAILED",
  "WORKLOAD_STATE_DELETING",
];

/** Every workload, filterable by kind, state, node and labels; a virtualised list, live. */
export function WorkloadsView({ store }: { store: ClusterStore }) {
  const version = useStore(store);
  const [filter, setFilter] = useState<WorkloadFilter>(emptyFilter);
  const list = useMemo(() => filterWorkloads(store.workloads.values(), filter), [version, filter]);
  const labelError = parseLabelTerms(filter.label).error;
  const set = (field: keyof WorkloadFilter) => (e: Event) =>
    setFilter({ ...filter, [field]: (e.currentTarget as HTMLInputElement).value });
  const open = (i: number) => navigate(routePath({ view: "workload", id: list[i]!.id }));
  return (
    <section aria-labelledby="workloads-title" class="view">
      <div class="view-head">
        <h1 id="workloads-title">Workloads</h1>
        <form class="filters" aria-label="Filter workloads" onSubmit={(e) => e.preventDefault()}>
          <label class="field">
            <span>Id</span>
            <input type="search" value={filter.text} onInput={set("text")} />
          </label>
          <label class="field">
            <span>Kind</span>
            <select value={filter.kind} onChange={set("kind")}>
              <option value="">any</option>
              {kinds.map((k) => (
                <option key={k} value={k}>
                  {enumLabel(k, "WORKLOAD_KIND_")}
                </option>
              ))}
            </select>
          </label>
          <label class="field">
            <span>State</span>
            <select value={filter.state} onChange={set("state")}>
              <option value="">any</option>
              {states.map((s) => (
                <option key={s} value={s}>
                  {enumLabel(s, "WORKLOAD_STATE_")}
                </option>
              ))}
            </select>
          </label>
          <label class="field">
            <span>Node</span>
            <input type="search" value={filter.node} onInput={set("node")} />
          </label>
          <label class="field">
            <span>Labels</span>
            <input
              type="search"
              value={filter.label}
              placeholder="app=web, !canary"
              aria-invalid={labelError ? "true" : undefined}
              onInput={set("label")}
            />
            {labelError ? <small class="bad">{labelError}</small> : null}
          </label>
        </form>
        <p class="muted" aria-live="polite">
          {list.length} of {store.workloads.size} workloads{store.workloadsLoaded ? "" : " (loading…)"}
        </p>
      </div>
      <div class="list-head" aria-hidden="true">
        <span>id</span>
        <span>kind</span>
        <span>state</span>
        <span>ready</span>
        <span>nodes</span>
      </div>
      <VirtualList
        id="workloads"
        count={list.length}
        rowHeight={36}
        label="Workloads (arrow keys move, Enter opens)"
        className="table-list"
        onActivate={open}
        renderRow={(i) => {
          const w = list[i]!;
          const replicas = w.status?.replicas ?? [];
          const nodes = [...new Set(replicas.map((r) => r.nodeId).filter(Boolean))];
          return (
            <div class="wl-row">
              <span class="wl-id ellipsis">{w.id}</span>
              <span>{enumLabel(w.kind, "WORKLOAD_KIND_")}</span>
              <span class={`badge ${stateTone(w.status?.state)}`}>{enumLabel(w.status?.state, "WORKLOAD_STATE_")}</span>
              <span>
                {w.status?.readyReplicas ?? 0}/{w.replicas ?? 1}
              </span>
              <span class="ellipsis">{nodes.join(", ") || "—"}</span>
            </div>
          );
        }}
      />
    </section>
  );
}
