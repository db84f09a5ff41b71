import { api } from "@persys/schema";
import { encodeRecord, type NodeRecord, type ReplicaStatusRecord, reportOf } from "../cluster/records.js";
import type { TxnOp } from "../state/state-store.js";
import type { ReconcileContext } from "./reconciler.js";

/**
 * Node liveness as the leader acts on it: a node whose lease expired is NotReady (its replicas
 * show UNKNOWN); after `lostAfter` it is lost and its replicas are re-placed (the workload
 * reconciler evicts them); a node that comes back is Ready again. Draining nodes have their
 * replicas moved by the workload reconciler too.
 */
export class NodeLifecycle {
  constructor(private readonly ctx: ReconcileContext) {}

  async reconcile(nodeId: string): Promise<void> {
    const { state, queue } = this.ctx;
    const held = state.nodes.get(nodeId);
    if (!held) return;
    const node = held.value;
    const now = this.ctx.now();
    if (state.isLive(nodeId)) {
      if (node.notReadySince || node.lostAt) {
        const { notReadySince: _n, lostAt: _l, ...ready } = node;
        if (await this.write(held.modRevision, ready)) {
          void this.ctx.events.record({ type: "NodeReady", nodeId, message: `node ${nodeId} is ready again` });
        }
      }
    } else if (!node.notReadySince) {
      const since = new Date(now).toISOString();
      if (await this.write(held.modRevision, { ...node, notReadySince: since }, this.unknownStatuses(nodeId, since))) {
        void this.ctx.events.record({
          type: "NodeNotReady",
          severity: "warning",
          nodeId,
          message: `node ${nodeId} stopped heartbeating; its replicas are re-placed after ${Math.round(this.ctx.lostAfterMs / 1000)} s`,
        });
      }
      queue.addAfter(`n:${nodeId}`, this.ctx.lostAfterMs);
    } else if (!node.lostAt) {
      const elapsed = now - Date.parse(node.notReadySince);
      if (elapsed >= this.ctx.lostAfterMs) {
        if (await this.write(held.modRevision, { ...node, lostAt: new Date(now).toISOString() })) {
          const affected = new Set(state.assignmentsOn(nodeId).map((a) => a.value.workloadId));
          void this.ctx.events.record({
            type: "NodeLost",
            severity: "error",
            nodeId,
            code: "NODE_LOST",
            message: `node ${nodeId} lost after ${Math.round(elapsed / 1000)} s NotReady; re-placing ${affected.size} workload(s)`,
          });
        }
      } else {
        queue.addAfter(`n:${nodeId}`, this.ctx.lostAfterMs - elapsed);
      }
    }
    const current = state.nodes.get(nodeId)?.value;
    if (current?.lostAt || current?.draining) {
      for (const a of state.assignmentsOn(nodeId)) queue.add(`w:${a.value.workloadId}`);
    }
  }

  /** Status writes marking the node's replicas UNKNOWN (the node stopped reporting). */
  private unknownStatuses(nodeId: string, since: string): TxnOp[] {
    const { state, keys } = this.ctx;
    return state.assignmentsOn(nodeId).flatMap((a) => {
      const status = state.status(a.value.workloadId, a.value.index)?.value;
      const report = status
        ? reportOf(status)
        : api.ReplicaReport.fromPartial({ workloadId: a.value.workloadId, replicaIndex: a.value.index });
      const record: ReplicaStatusRecord = {
        nodeId,
        report: api.ReplicaReport.toJSON({
          ...report,
          state: api.ReplicaState.REPLICA_STATE_UNKNOWN,
          reason: {
            code: api.ErrorCode.NODE_LOST,
            message: `node ${nodeId} stopped heartbeating at ${since}`,
            retryable: true,
            attempts: 0,
            since: new Date(since),
          },
        }),
        ...(status?.agentRevision ? { agentRevision: status.agentRevision } : {}),
        updatedAt: since,
      };
      return [
        { type: "put" as const, key: keys.status(a.value.workloadId, a.value.index), value: encodeRecord(record) },
      ];
    });
  }

  private async write(modRevision: number, record: NodeRecord, extra: TxnOp[] = []): Promise<boolean> {
    const { keys, batcher, state } = this.ctx;
    const key = keys.node(record.id);
    const outcome = await batcher.submit({
      compare: [{ key, target: "modRevision", op: "=", value: modRevision }],
      ops: [{ type: "put", key, value: encodeRecord(record) }, ...extra.slice(0, 100)],
    });
    if (outcome.succeeded) await state.waitFor(outcome.revision);
    return outcome.succeeded;
  }
}
