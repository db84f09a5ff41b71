/**
 * The resolution (ms between two points of one series) at which `seriesCount` series stay within
 * `pointsPerSecond` points a second: `baseMs` while they fit, else the smallest multiple of `baseMs`
 * that fits. Usage and reservation series grow with the cluster (five per node, two per replica):
 * at 5,000 nodes with four replicas each and a 10 s base, they would write 7,000 points a second to
 * the event store, more than every placement's events together. A budget keeps that write rate
 * bounded as the cluster grows (as Nomad bounds heartbeats per second), at the price of coarser
 * history in large clusters. `Infinity` (no budget) always gives `baseMs`.
 */
export function budgetedResolutionMs(baseMs: number, seriesCount: number, pointsPerSecond: number): number {
  const spacingMs = (seriesCount * 1000) / pointsPerSecond;
  return Math.max(1, Math.ceil(spacingMs / baseMs)) * baseMs;
}
