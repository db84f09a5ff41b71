import { PersysError } from "@persys/schema";
import type { ReconcileContext } from "./reconciler.js";

/**
 * Stops copies of replicas that a node runs but that are not (or no longer) assigned to it: a
 * node returning after its replicas moved, or a leftover of a deleted workload. This is the fence
 * that keeps a replica from running twice for longer than one reconcile.
 */
export class StrayCollector {
  constructor(private readonly ctx: ReconcileContext) {}

  /** `key` is `<node>/<workload>/<index>`. */
  async reconcile(key: string): Promise<void> {
    const { state, keys, pool, batcher, events } = this.ctx;
    const held = state.strays.get(key);
    if (!held) return;
    const stray = held.value;
    const assignment = state.assignment(stray.workloadId, stray.index)?.value;
    const storeKey = keys.stray(stray.nodeId, stray.workloadId, stray.index);
    if (!(assignment && assignment.nodeId === stray.nodeId)) {
      const node = state.nodes.get(stray.nodeId)?.value;
      if (!node || !state.isLive(node.id)) return; // Stopped when the node is back (it reports it again).
      try {
        await pool.delete(node.endpoint, node.id, stray.name);
      } catch (error) {
        if (!(error instanceof PersysError && error.code === "NOT_FOUND")) throw error;
      }
      void events.record({
        type: "StrayStopped",
        severity: "warning",
        workloadId: stray.workloadId,
        replicaIndex: stray.index,
        nodeId: stray.nodeId,
        message: `stopped a stale copy of replica ${stray.index} on ${stray.nodeId}: ${
          assignment ? `the replica now runs on ${assignment.nodeId}` : "the replica is not assigned there"
        }`,
      });
    }
    const outcome = await batcher.submit({
      compare: [{ key: storeKey, target: "modRevision", op: "=", value: held.modRevision }],
      ops: [{ type: "delete", key: storeKey }],
    });
    if (outcome.succeeded) await state.waitFor(outcome.revision);
  }
}
