import { type api, PersysError } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";
import { PagedList } from "../client/paged-list.js";
import { type NodeStateName, nodeStateInput } from "../enums/enum-inputs.js";

/** Filters and paging of {@link NodesApi.list}; every set filter must hold. */
export interface ListNodesOptions extends CallOptions {
  readonly state?: api.NodeState | NodeStateName | undefined;
  /** Selector on node labels, same syntax as workload label selectors (`zone=a,disk in (ssd)`). */
  readonly labelSelector?: string | undefined;
  /** Only nodes having this capability, e.g. `kvm`. */
  readonly capability?: string | undefined;
  /** Nodes per page (the server's default 100, at most 1000). */
  readonly pageSize?: number | undefined;
}

/** What {@link NodesApi.drain} did (or, with `dryRun`, would do). */
export interface DrainResult {
  readonly node: api.Node;
  /** Replicas being (or that would be) moved off the node. */
  readonly evicted: readonly api.ReplicaRef[];
}

/** The node of a response, or an INTERNAL error when the server sent none. */
function nodeOf(response: { node?: api.Node | undefined }): api.Node {
  if (!response.node) throw new PersysError("INTERNAL", "the server sent no node");
  return response.node;
}

/** Nodes: list and inspect them, take them out of service and back. */
export class NodesApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.NodeServiceClient,
  ) {}

  /** Nodes matching every filter, ordered by id, fetched page by page as you iterate. */
  list(options: ListNodesOptions = {}): PagedList<api.Node> {
    const base = {
      state: nodeStateInput(options.state),
      labelSelector: options.labelSelector ?? "",
      capability: options.capability ?? "",
      pageSize: options.pageSize ?? 0,
    };
    return new PagedList(async (pageToken) => {
      const response = await this.runner.unary<api.ListNodesResponse>(
        (md, o, cb) => this.client.listNodes({ ...base, pageToken }, md, o, cb),
        options,
      );
      return { items: response.nodes, nextPageToken: response.nextPageToken };
    });
  }

  /** The node. Rejects with NOT_FOUND when no node has this id. */
  async get(id: string, options: CallOptions = {}): Promise<api.Node> {
    return nodeOf(
      await this.runner.unary<api.GetNodeResponse>(
        (md, o, cb) => this.client.getNode({ nodeId: id }, md, o, cb),
        options,
      ),
    );
  }

  /** Stops new placements on the node; running replicas stay. Idempotent. */
  async cordon(id: string, options: CallOptions & { reason?: string | undefined } = {}): Promise<api.Node> {
    const request = { nodeId: id, reason: options.reason ?? "" };
    return nodeOf(
      await this.runner.unary<api.CordonNodeResponse>(
        (md, o, cb) => this.client.cordonNode(request, md, o, cb),
        options,
      ),
    );
  }

  /** Allows placements on the node again and ends a drain. Idempotent. */
  async uncordon(id: string, options: CallOptions = {}): Promise<api.Node> {
    return nodeOf(
      await this.runner.unary<api.UncordonNodeResponse>(
        (md, o, cb) => this.client.uncordonNode({ nodeId: id }, md, o, cb),
        options,
      ),
    );
  }

  /**
   * Cordons the node and re-places its replicas elsewhere, one workload update at a time. With
   * `dryRun` nothing changes and the result lists what would move.
   */
  async drain(
    id: string,
    options: CallOptions & { reason?: string | undefined; dryRun?: boolean | undefined } = {},
  ): Promise<DrainResult> {
    const request = { nodeId: id, reason: options.reason ?? "", dryRun: options.dryRun ?? false };
    const response = await this.runner.unary<api.DrainNodeResponse>(
      (md, o, cb) => this.client.drainNode(request, md, o, cb),
      options,
    );
    return { node: nodeOf(response), evicted: response.evicted };
  }
}
