import { api } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import { EVENTS_STREAM, workloadStream } from "../cluster/event-recorder.js";
import type { EventStore, StoredEvent } from "../events/event-store.js";
import type { NodeService } from "../nodes/node-service.js";
import type { WorkloadService } from "../workloads/workload-service.js";

/**
 * What intelligence reads: the cluster state cache (through the same views the API serves), the
 * event store's streams and series, and a clock. Intelligence holds no write handle to the state
 * store: it cannot mutate the cluster.
 */
export interface IntelligenceSources {
  readonly state: ClusterState;
  readonly nodes: Pick<NodeService, "nodeView">;
  readonly workloads: Pick<WorkloadService, "get">;
  readonly events: Pick<EventStore, "read" | "range">;
  readonly now: () => number;
}

/** Every node as the API shows it, ordered by id. */
export function allNodes(sources: IntelligenceSources): api.Node[] {
  return [...sources.state.nodes.keys()].sort().map((id) => sources.nodes.nodeView(sources.state.nodes.get(id)!.value));
}

/** Every workload (full view, with replica statuses and diagnoses), ordered by id. */
export function allWorkloads(sources: IntelligenceSources): api.Workload[] {
  const out: api.Workload[] = [];
  for (const id of [...sources.state.workloads.keys()].sort()) {
    const workload = sources.workloads.get({ workloadId: id, view: api.WorkloadView.WORKLOAD_VIEW_FULL }).workload;
    if (workload) out.push(workload);
  }
  return out;
}

/** Events of the global stream (or one workload's) from `fromMs` on, at most `limit`, newest kept. */
export async function eventsSince(
  sources: IntelligenceSources,
  fromMs: number,
  options: { workloadId?: string; limit?: number } = {},
): Promise<StoredEvent[]> {
  const stream = options.workloadId ? workloadStream(options.workloadId) : EVENTS_STREAM;
  const newestFirst = await sources.events.read(stream, { fromMs, limit: options.limit ?? 2000, reverse: true });
  return newestFirst.reverse();
}

/** Default and bounds of `window_seconds` in the intelligence requests. */
export const WINDOW = { defaultSeconds: 3600, maxSeconds: 7 * 24 * 3600 } as const;
