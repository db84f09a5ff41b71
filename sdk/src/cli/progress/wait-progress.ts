import { api, enumLabel } from "../../index.js";
import type { Colours } from "../cli-io.js";
import { reasonText } from "../output/diagnosis-views.js";

const spinnerFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** One line per replica: `web[0]  running   n1` (plus the reason while not running). */
export function replicaLines(w: api.Workload): string[] {
  const replicas = w.status?.replicas ?? [];
  if (replicas.length === 0) {
    const state = w.status ? enumLabel(api.WorkloadState, w.status.state) : "submitted";
    return [`${w.id}: ${state}`];
  }
  return replicas.map((r) => {
    const state = enumLabel(api.ReplicaState, r.state);
    const node = r.nodeId ? ` on ${r.nodeId}` : "";
    const why =
      r.state === api.ReplicaState.REPLICA_STATE_RUNNING ? "" : reasonText(r.reason) || r.placement?.message || "";
    return `${w.id}[${r.index}] ${state}${node}${why ? ` — ${why}` : ""}`;
  });
}

/**
 * Shows how the replicas of waited-for workloads progress. On a terminal: a block of lines (one per
 * replica) redrawn in place with a spinner. Otherwise: a plain line whenever a replica's line
 * changes, so logs and CI output stay readable.
 */
export class WaitProgress {
  private readonly lines = new Map<string, string[]>();
  private readonly printed = new Map<string, string>();
  private drawn = 0;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;

  /** @param live redraw in place (default: when `stream` is a TTY) */
  constructor(
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly c: Colours,
    private readonly live = stream.isTTY === true,
  ) {
    if (this.live) {
      this.timer = setInterval(() => this.redraw(), 120);
      this.timer.unref();
    }
  }

  /** Records a new version of a workload. */
  update(workload: api.Workload): void {
    const lines = replicaLines(workload);
    this.lines.set(workload.id, lines);
    if (this.live) {
      this.redraw();
      return;
    }
    lines.forEach((line, i) => {
      const key = `${workload.id}#${i}`;
      if (this.printed.get(key) === line) return;
      this.printed.set(key, line);
      this.stream.write(`${line}\n`);
    });
  }

  private redraw(): void {
    const all = [...this.lines.values()].flat();
    const spin = spinnerFrames[this.frame++ % spinnerFrames.length]!;
    let text = this.drawn > 0 ? `\u001b[${this.drawn}A` : "";
    for (const line of all) text += `\u001b[2K${this.c.cyan(spin)} ${line}\n`;
    this.drawn = all.length;
    this.stream.write(text);
  }

  /** Stops the spinner and leaves the last lines on screen (without the spinner), or prints nothing more. */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.live || this.drawn === 0) return;
    let text = `\u001b[${this.drawn}A`;
    for (const line of [...this.lines.values()].flat()) text += `\u001b[2K  ${line}\n`;
    this.stream.write(text);
    this.drawn = 0;
  }
}
