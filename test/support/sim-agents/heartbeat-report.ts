/**
 * The heartbeat of a simulated node: Go usage and `workload_statuses`, plus the Persys `persys_node`
 * (conditions, measured usage) and `persys_replicas` extensions.
 */
import { api, type control } from "@persys/schema";
import { apiResources, type SimNodeDescription, type SimResources } from "./node-description.js";
import type { SimReplica } from "./replica-runtime.js";
import { goWorkloadStatus, replicaReport, replicaUsage, type UsageModel } from "./wire-reports.js";

/** Reservations (of replicas not stopped or failed) and measured use (baseline + running replicas). */
export function nodeUsage(
  node: SimNodeDescription,
  replicas: readonly SimReplica[],
  model: UsageModel,
): { allocated: SimResources; used: SimResources } {
  const base = node.usage ?? { cpuMillicores: 0, memoryMiB: 0, diskGiB: 0 };
  let aCpu = 0;
  let aMem = 0;
  let aDisk = 0;
  let uCpu = base.cpuMillicores;
  let uMem = base.memoryMiB;
  for (const r of replicas) {
    if (r.state === "STOPPED" || r.state === "FAILED") continue;
    aCpu += r.resources.cpuMillicores;
    aMem += r.resources.memoryMiB;
    aDisk += r.resources.diskGiB;
    const used = replicaUsage(r, model);
    uCpu += used.cpuMillicores;
    uMem += used.memoryMiB;
  }
  return {
    allocated: { cpuMillicores: aCpu, memoryMiB: aMem, diskGiB: aDisk },
    used: { cpuMillicores: uCpu, memoryMiB: uMem, diskGiB: base.diskGiB + aDisk },
  };
}

/** One heartbeat request for the node's current replicas. */
export function heartbeatRequest(
  node: SimNodeDescription,
  replicas: readonly SimReplica[],
  model: UsageModel,
  now = new Date(),
): control.HeartbeatRequest {
  const { allocated, used } = nodeUsage(node, replicas, model);
  return {
    nodeId: node.id,
    usage: {
      cpuAllocatedMillicores: allocated.cpuMillicores,
      cpuUsedMillicores: used.cpuMillicores,
      memoryAllocatedMb: allocated.memoryMiB,
      memoryUsedMb: used.memoryMiB,
      diskAllocatedGb: allocated.diskGiB,
      diskUsedGb: used.diskGiB,
    },
    workloadStatuses: replicas.map(goWorkloadStatus),
    timestamp: now,
    workloadUsage: [],
    persysNode: {
      conditions: [
        { type: "RuntimeReady", status: api.ConditionStatus.CONDITION_STATUS_TRUE, reason: "Simulated", message: "" },
      ],
      usage: apiResources(used),
    },
    persysReplicas: replicas.map((r) => replicaReport(r, model)),
  };
}
