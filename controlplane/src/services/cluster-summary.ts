import { api } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import type { NodeService } from "../nodes/node-service.js";
import { workloadView } from "../workloads/workload-view.js";

const add = (a: api.Resources, b: api.Resources | undefined): api.Resources => ({
  cpuMillicores: a.cpuMillicores + (b?.cpuMillicores ?? 0),
  memoryMib: a.memoryMib + (b?.memoryMib ?? 0),
  diskGib: a.diskGib + (b?.diskGib ?? 0),
});
const zero = (): api.Resources => ({ cpuMillicores: 0, memoryMib: 0, diskGib: 0 });

/** Counts and totals over the whole cluster. */
export function clusterSummary(
  state: ClusterState,
  nodes: NodeService,
  leaderId: string,
  version: string,
): api.ClusterSummary {
  const W = api.WorkloadState;
  const R = api.ReplicaState;
  const summary = api.ClusterSummary.fromPartial({ leaderId, version, generatedAt: new Date() });
  let allocatable = zero();
  let allocated = zero();
  let usage = zero();
  for (const held of state.nodes.values()) {
    const node = nodes.nodeView(held.value);
    summary.nodesTotal++;
    if (node.state === api.NodeState.NODE_STATE_READY) summary.nodesReady++;
    else summary.nodesNotReady++;
    if (node.cordoned) summary.nodesCordoned++;
    allocatable = add(allocatable, node.allocatable);
    allocated = add(allocated, node.allocated);
    usage = add(usage, node.usage);
  }
  for (const held of state.workloads.values()) {
    const w = workloadView(state, held, false);
    summary.workloadsTotal++;
    const s = w.status?.state;
    if (s === W.WORKLOAD_STATE_RUNNING) summary.workloadsRunning++;
    else if (s === W.WORKLOAD_STATE_PENDING || s === W.WORKLOAD_STATE_PROGRESSING) summary.workloadsPending++;
    else if (s === W.WORKLOAD_STATE_DEGRADED) summary.workloadsDegraded++;
    else if (s === W.WORKLOAD_STATE_FAILED) summary.workloadsFailed++;
    else if (s === W.WORKLOAD_STATE_STOPPED) summary.workloadsStopped++;
    for (const r of w.status?.replicas ?? []) {
      summary.replicasTotal++;
      if (r.state === R.REPLICA_STATE_RUNNING) summary.replicasRunning++;
      else if (r.state === R.REPLICA_STATE_PENDING) summary.replicasPending++;
      else if (r.state === R.REPLICA_STATE_FAILED) summary.replicasFailed++;
    }
  }
  return { ...summary, allocatable, allocated, usage };
}
