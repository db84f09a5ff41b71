/**
 * Seeded simulated clusters and workload mixes, as plain data, for tests, benchmarks and
 * control-plane load tests (which wrap the nodes in simulated agents).
 *
 * ```ts
 * const nodes = generateCluster({ nodes: 1000, seed: 7 });
 * const workloads = generateWorkloads({ count: 10_000, seed: 7, zones: zoneNames(1000) });
 * ```
 */
export { type ClusterShape, capacityClasses, generateCluster, simLabels, zoneNames } from "./cluster-generator.js";
export { makeNode, makeRequest, resources } from "./node-builder.js";
export { SeededRandom } from "./seeded-random.js";
export { generateWorkloads, type WorkloadMix } from "./workload-generator.js";
