import { memo } from "preact/compat";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { ApiClient } from "../api/api-client.js";
import type { NodeJson } from "../api/wire-types.js";
import { useSize, useStore } from "../components/hooks.js";
import { VirtualList } from "../components/virtual-list.js";
import type { ClusterStore } from "../model/cluster-store.js";
import { amount, enumLabel, time } from "../model/format.js";
import { nodeBars, nodeFeatures, nodeStatus } from "../model/node-bars.js";
import { chunk } from "../model/virtual-window.js";

const CARD_WIDTH = 300;
const ROW_HEIGHT = 262;

/** The cluster overview: totals, and every node as a card (virtualised rows of cards). */
export function OverviewView({ store, api }: { store: ClusterStore; api: ApiClient }) {
  const version = useStore(store);
  const [filter, setFilter] = useState("");
  const gridRef = useRef<HTMLDivElement>(null);
  const { width } = useSize(gridRef);
  const nodes = useMemo(() => {
    const text = filter.trim().toLowerCase();
    const list = [...store.nodes.values()].filter(
      (n) => !text || n.id.toLowerCase().includes(text) || labelText(n).includes(text),
    );
    return list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }, [store.nodesVersion, filter]);
  const ready = useMemo(
    () => [...store.nodes.values()].filter((n) => n.state === "NODE_STATE_READY").length,
    [store.nodesVersion],
  );
  const totals = useMemo(() => workloadTotals(store), [version]);
  const columns = Math.max(1, Math.floor((width || CARD_WIDTH) / CARD_WIDTH));
  const rows = useMemo(() => chunk(nodes, columns), [nodes, columns]);
  useRenderMarks(store, nodes.length);
  return (
    <section aria-labelledby="overview-title" class="view">
      <div class="view-head">
        <h1 id="overview-title">Cluster</h1>
        <dl class="totals" aria-label="Cluster totals">
          <div>
            <dt>nodes</dt>
            <dd data-testid="nodes-total">{store.nodes.size}</dd>
          </div>
          <div>
            <dt>ready</dt>
            <dd>{ready}</dd>
          </div>
          <div>
            <dt>workloads</dt>
            <dd data-testid="workloads-total">{store.workloads.size}</dd>
          </div>
          {Object.entries(totals).map(([state, count]) => (
            <div key={state}>
              <dt>{state}</dt>
              <dd data-testid={`workloads-${state.replace(/ /g, "-")}`}>{count}</dd>
            </div>
          ))}
        </dl>
        <label class="field">
          <span>Filter nodes</span>
          <input
            type="search"
            value={filter}
            placeholder="id or label"
            onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
      </div>
      {!store.nodesLoaded ? <p class="muted">Loading nodes…</p> : null}
      {store.nodesLoaded && nodes.length === 0 ? <p class="muted">No nodes{filter ? " match" : " yet"}.</p> : null}
      <div ref={gridRef} class="card-grid-host">
        <VirtualList
          count={rows.length}
          rowHeight={ROW_HEIGHT}
          label="Nodes"
          className="card-rows"
          renderRow={(i) => (
            <div class="card-row" style={{ gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))` }}>
              {rows[i]!.map((node) => (
                <NodeCard key={node.id} node={node} api={api} />
              ))}
            </div>
          )}
        />
      </div>
    </section>
  );
}

function labelText(node: NodeJson): string {
  return Object.entries(node.labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")
    .toLowerCase();
}

function workloadTotals(store: ClusterStore): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of store.workloads.values()) {
    const state = enumLabel(w.status?.state, "WORKLOAD_STATE_");
    out[state] = (out[state] ?? 0) + 1;
  }
  return out;
}

/** performance marks for the render benchmark: first cards drawn, and everything loaded and drawn. */
function useRenderMarks(store: ClusterStore, shown: number): void {
  useEffect(() => {
    const perf = performance;
    if (shown > 0 && perf.getEntriesByName("persys:first-render").length === 0) {
      requestAnimationFrame(() => perf.mark("persys:first-render"));
    }
    if (store.nodesLoaded && store.workloadsLoaded && perf.getEntriesByName("persys:overview-settled").length === 0) {
      requestAnimationFrame(() => {
        perf.mark("persys:overview-settled");
        document.documentElement.dataset.settled = "true";
      });
    }
  });
}

/** One node: status, bars per dimension (reserved over allocatable, measured use), labels, features. */
export const NodeCard = memo(function NodeCard({ node, api }: { node: NodeJson; api: ApiClient }) {
  const status = nodeStatus(node);
  const [busy, setBusy] = useState(false);
  const act = async (action: "cordon" | "uncordon" | "drain") => {
    if (action === "drain" && !confirm(`Drain ${node.id}? Its replicas are re-placed elsewhere.`)) return;
    setBusy(true);
    try {
      await api.request("POST", `/v1/nodes/${encodeURIComponent(node.id)}/${action}`, {});
    } catch (e) {
      alert((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const labels = Object.entries(node.labels ?? {});
  return (
    <article class="node-card" aria-label={`Node ${node.id}`} data-node-id={node.id}>
      <header>
        <h2 title={node.id}>{node.id}</h2>
        <span class={`badge ${status.tone}`}>{status.text}</span>
      </header>
      {nodeBars(node).map((bar) => (
        <div class="bar" key={bar.dimension}>
          <div class="bar-label">
            <span>{bar.dimension}</span>
            <span>
              {amount(bar.reserved, bar.unit)} reserved · {amount(bar.usage, bar.unit)} used /{" "}
              {amount(bar.allocatable, bar.unit)}
            </span>
          </div>
          <div class="bar-track" aria-hidden="true">
            <div class="bar-reserved" style={{ width: `${bar.reservedFraction * 100}%` }} />
            <div class="bar-usage" style={{ width: `${bar.usageFraction * 100}%` }} />
          </div>
        </div>
      ))}
      <ul class="chips" aria-label="Runtimes and capabilities">
        {nodeFeatures(node).map((f) => (
          <li class="chip feature" key={f}>
            {f}
          </li>
        ))}
      </ul>
      <ul class="chips" aria-label="Labels">
        {labels.slice(0, 6).map(([k, v]) => (
          <li class="chip" key={k}>
            {k}={v}
          </li>
        ))}
        {labels.length > 6 ? <li class="chip">+{labels.length - 6}</li> : null}
      </ul>
      <footer>
        <span class="muted">
          {node.replicaCount ?? 0} replicas · {node.arch ?? "?"} · beat {time(node.lastHeartbeatAt)}
          {node.cordonReason ? ` · ${node.cordonReason}` : ""}
        </span>
        <span class="actions">
          {node.cordoned ? (
            <button type="button" disabled={busy} onClick={() => act("uncordon")}>
              Uncordon
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={() => act("cordon")}>
              Cordon
            </button>
          )}
          {!node.draining ? (
            <button type="button" disabled={busy} onClick={() => act("drain")}>
              Drain
            </button>
          ) : null}
        </span>
      </footer>
    </article>
  );
});
