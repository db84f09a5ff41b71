import { type api, PersysError } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import { replicaName } from "../cluster/keys.js";
import type { AgentPool } from "../reconciler/agent-pool.js";

export interface ReplicaLogsParts {
  readonly state: ClusterState;
  readonly pool: AgentPool;
}

/** Interleaves async iterables as their items arrive; the first failure fails the whole stream. */
async function* merge<T>(sources: readonly AsyncIterable<T>[]): AsyncIterable<T> {
  const iterators = sources.map((s) => s[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ i: number; r: IteratorResult<T> }>>();
  const pull = (i: number) =>
    pending.set(
      i,
      iterators[i]!.next().then((r) => ({ i, r })),
    );
  for (let i = 0; i < iterators.length; i++) pull(i);
  try {
    while (pending.size > 0) {
      const { i, r } = await Promise.race(pending.values());
      if (r.done) {
        pending.delete(i);
        continue;
      }
      pull(i);
      yield r.value;
    }
  } finally {
    await Promise.allSettled(iterators.map((it) => it.return?.()));
  }
}

/**
 * The control plane's `StreamWorkloadLogs`: finds the node each selected replica is assigned to and
 * streams its lines from that node's agent (`persys.api.v1.NodeLogService`), interleaving replicas
 * as lines arrive. `follow`, `tail_lines`, `since` and `service` are passed to the agents. A
 * requested replica that is not placed is NOT_FOUND; a workload with no placed replica ends at once.
 * Aborting `signal` (the client went away) cancels every agent stream.
 */
export function replicaLogs(parts: ReplicaLogsParts) {
  return (
    request: api.StreamWorkloadLogsRequest,
    signal: AbortSignal,
  ): AsyncIterable<api.StreamWorkloadLogsResponse> => {
    const assignments = parts.state
      .assignmentsOf(request.workloadId)
      .filter((a) => request.replicaIndex === undefined || a.value.index === request.replicaIndex);
    if (request.replicaIndex !== undefined && assignments.length === 0) {
      throw new PersysError(
        "NOT_FOUND",
        `replica ${request.replicaIndex} of workload ${request.workloadId} is not placed on a node`,
        { details: [{ path: "replicaIndex", reason: "no such placed replica" }] },
      );
    }
    const sources = assignments.flatMap((a) => {
      const node = parts.state.nodes.get(a.value.nodeId)?.value;
      if (!node) return [];
      const agentRequest: api.StreamReplicaLogsRequest = {
        replicaName: replicaName(a.value.workloadId, a.value.index),
        follow: request.follow,
        ...(request.tailLines !== undefined ? { tailLines: request.tailLines } : {}),
        ...(request.since ? { since: request.since } : {}),
        service: request.service,
      };
      return [parts.pool.logs(node.endpoint, node.id, agentRequest, signal)];
    });
    return sources.length === 1 ? sources[0]! : merge(sources);
  };
}
