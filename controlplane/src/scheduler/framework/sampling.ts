/**
 * How many feasible nodes to score, after kube-scheduler's `percentageOfNodesToScore`: on small
 * clusters all of them; from `minNodes` up, an adaptive share of the cluster that falls linearly
 * from 50% at 100 nodes to 5% at 5,000 nodes (5% beyond), but never fewer than `minNodes`.
 * Filtering always covers every node; only scoring is sampled.
 */
export interface SamplingOptions {
  /** Clusters with at most this many feasible nodes score all of them. Default 100. */
  readonly minNodes?: number;
  /** A fixed share (1..100) instead of the adaptive one. */
  readonly percentage?: number;
}

/** The adaptive share of nodes to score, in percent, for a cluster of `totalNodes`. */
export function adaptivePercentage(totalNodes: number): number {
  if (totalNodes <= 100) return 50;
  if (totalNodes >= 5000) return 5;
  return 50 - (45 * (totalNodes - 100)) / 4900;
}

/** The number of the `feasible` nodes to score in a cluster of `totalNodes`. */
export function nodesToScore(totalNodes: number, feasible: number, options: SamplingOptions = {}): number {
  const minNodes = options.minNodes ?? 100;
  if (feasible <= minNodes) return feasible;
  const pct = options.percentage ?? adaptivePercentage(totalNodes);
  const wanted = Math.max(minNodes, Math.ceil((totalNodes * pct) / 100));
  return Math.min(wanted, feasible);
}

/**
 * The slot the sample window starts at for a replica: a hash of (seed, workload, replica), so
 * windows rotate over the cluster across workloads and replicas (every node gets its turn), yet a
 * dry run and the real placement of the same replica on the same snapshot see the same window.
 */
export function sampleStart(seed: number, idHash: number, replica: number, slots: number): number {
  if (slots === 0) return 0;
  let h = (idHash ^ Math.imul(seed | 0, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (replica + 0x7f4a7c15), 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) % slots;
}
