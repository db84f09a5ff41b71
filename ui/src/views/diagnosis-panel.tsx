import { useMemo, useRef, useState } from "preact/hooks";
import type { PlacementDiagnosisJson } from "../api/wire-types.js";
import { useSize } from "../components/hooks.js";
import { ScrollRegion } from "../components/scroll-region.js";
import { buildDiagnosisGrid, type GridRow, scoreBreakdown } from "../model/diagnosis-grid.js";
import { virtualWindow } from "../model/virtual-window.js";

export interface DiagnosisPanelProps {
  /** The recorded decision (explain, plan or the replica status). */
  readonly diagnosis: PlacementDiagnosisJson | undefined;
  /** Heading text, e.g. "Replica 0". */
  readonly title: string;
}

const GRID_ROW = 40;

/**
 * A placement decision: the scheduler's one-line message and recorded counts, the nodes × filters
 * grid as the scheduler recorded it (pass/fail with the numbers, winner first; only the rows in view
 * are rendered) and the score breakdown of the top candidates.
 */
export function DiagnosisPanel(props: DiagnosisPanelProps) {
  const grid = useMemo(() => buildDiagnosisGrid(props.diagnosis), [props.diagnosis]);
  const d = props.diagnosis;
  const scores = scoreBreakdown(d);
  return (
    <section class="diagnosis" aria-label={`Placement diagnosis, ${props.title}`} data-testid="diagnosis">
      <h3>{props.title}</h3>
      {d ? (
        <>
          <p class="diag-message" data-testid="diagnosis-message">
            {d.message || (d.winnerNodeId ? `Placed on ${d.winnerNodeId}.` : "No decision message.")}
          </p>
          <p class="muted">
            {d.nodesEvaluated ?? 0} nodes evaluated · {d.feasibleNodes ?? 0} feasible · {d.scoredNodes ?? 0} scored
            {d.winnerNodeId ? (
              <>
                {" "}
                · chosen <strong data-testid="winner">{d.winnerNodeId}</strong>
              </>
            ) : (
              " · unschedulable"
            )}
            {d.decidedAt ? ` · decided ${new Date(d.decidedAt).toLocaleString()}` : ""}
          </p>
          {d.filterCounts?.length ? (
            <ul class="reasons" aria-label="Recorded filter reasons">
              {d.filterCounts.map((f) => (
                <li key={`${f.plugin}:${f.reason}`}>
                  <strong>{f.count ?? 0}</strong> {f.reason} <span class="muted">({f.plugin})</span>
                </li>
              ))}
            </ul>
          ) : null}
          {d.exhaustion?.length ? (
            <ul class="reasons" aria-label="Resource exhaustion">
              {d.exhaustion.map((x) => (
                <li key={x.dimension}>
                  {(x.dimension ?? "").replace("RESOURCE_DIMENSION_", "").toLowerCase()}: need {x.needed ?? 0} {x.unit},
                  most free {x.bestAvailable ?? 0} {x.unit}, {x.nodesShort ?? 0} nodes short
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ) : (
        <p class="muted">The scheduler has not decided for this replica yet.</p>
      )}
      <h4>Nodes × filters</h4>
      <p class="muted">
        As the scheduler saw them at the decision: {grid.feasibleCount} of {grid.rows.length} recorded nodes passed
        every filter.
        {grid.unrecorded > 0
          ? ` ${grid.unrecorded} more nodes were evaluated but not recorded; the counts above cover them.`
          : ""}
      </p>
      {grid.rows.length ? <GridTable grid={grid} /> : null}
      {scores.length ? (
        <>
          <h4>Score breakdown of the top candidates</h4>
          <div class="grid-scroll">
            <table class="scores" data-testid="scores">
              <thead>
                <tr>
                  <th scope="col">node</th>
                  <th scope="col">total</th>
                  {scores[0]!.parts.map((p) => (
                    <th scope="col" key={p.plugin}>
                      {p.plugin} <small class="muted">×{p.weight}</small>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {scores.map((s) => (
                  <tr key={s.nodeId}>
                    <th scope="row">{s.nodeId}</th>
                    <td>{s.total.toFixed(1)}</td>
                    {s.parts.map((p) => (
                      <td key={p.plugin}>
                        <span class="score-bar" style={{ width: `${Math.min(100, p.score) * 0.6}px` }} />
                        {p.score.toFixed(0)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  );
}

function GridTable({ grid }: { grid: ReturnType<typeof buildDiagnosisGrid> }) {
  const ref = useRef<HTMLElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const { height } = useSize(ref);
  const win = virtualWindow(grid.rows.length, GRID_ROW, Math.max(0, scrollTop - GRID_ROW), height || 420);
  const span = grid.columns.length + 2;
  return (
    <ScrollRegion
      regionRef={ref}
      className="grid-scroll grid-vscroll"
      label="Nodes by filters"
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLElement).scrollTop)}
    >
      <table class="diag-grid" data-testid="diagnosis-grid">
        <caption class="sr-only">Every node against every filter: pass or fail, with the numbers</caption>
        <thead>
          <tr>
            <th scope="col">node</th>
            {grid.columns.map((c, i) => (
              <th scope="col" key={c.label}>
                {c.label} <small class="muted">({grid.failuresPerColumn[i]} ✗)</small>
              </th>
            ))}
            <th scope="col">score</th>
          </tr>
        </thead>
        <tbody>
          {win.padTop ? (
            <tr class="pad" style={{ height: `${win.padTop}px` }}>
              <td colSpan={span} />
            </tr>
          ) : null}
          {grid.rows.slice(win.start, win.end).map((row) => (
            <GridRowView key={row.nodeId} row={row} labels={grid.columns.map((c) => c.label)} />
          ))}
          {win.padBottom ? (
            <tr class="pad" style={{ height: `${win.padBottom}px` }}>
              <td colSpan={span} />
            </tr>
          ) : null}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function GridRowView({ row, labels }: { row: GridRow; labels: string[] }) {
  return (
    <tr
      class={row.winner ? "winner" : row.feasible ? "feasible" : ""}
      data-node-id={row.nodeId}
      data-winner={row.winner ? "true" : undefined}
    >
      <th scope="row" class="grid-node">
        {row.winner ? "★ " : ""}
        {row.nodeId}
      </th>
      {row.cells.map((cell, i) => (
        <td
          key={labels[i]}
          class={`grid-cell ${cell.pass ? "pass" : "fail"}`}
          title={`${labels[i]}: ${cell.detail || "pass"}`}
        >
          <b aria-hidden="true">{cell.pass ? "✓" : "✗"}</b>
          <span class="sr-only">{cell.pass ? "pass" : "fail"}</span>
          {cell.detail ? ` ${cell.detail}` : ""}
        </td>
      ))}
      <td>{row.totalScore !== undefined ? row.totalScore.toFixed(1) : ""}</td>
    </tr>
  );
}
