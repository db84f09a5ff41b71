import { type api, PersysError } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";

/** The cluster as a whole. */
export class ClusterApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.ClusterServiceClient,
  ) {}

  /** Counts of nodes, workloads and replicas by state, capacity sums over ready nodes, the leader and version. */
  async summary(options: CallOptions = {}): Promise<api.ClusterSummary> {
    const response = await this.runner.unary<api.GetClusterSummaryResponse>(
      (md, o, cb) => this.client.getClusterSummary({}, md, o, cb),
      options,
    );
    if (!response.summary) throw new PersysError("INTERNAL", "the server sent no cluster summary");
    return response.summary;
  }
}
