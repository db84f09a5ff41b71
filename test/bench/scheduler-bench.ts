/**
 * Scheduler benchmark: fills a simulated cluster from empty with a simulated workload mix, one
 * decision per replica, every diagnosis kept, and prints one JSON line per cluster size.
 *
 *   npm run bench:scheduler                                   # sweep 100, 1000, 5000, 10000 nodes
 *   npm run bench:scheduler -- --nodes 5000 --workloads 50000 # one size
 *   npm run bench:scheduler -- --nodes 1000 --seed 7 --strategy bin-pack
 *   npm run bench:scheduler -- --nodes 5000 --replicas 10000  # one workload with many replicas
 *
 * Workloads default to 10 per node. Timing covers compiling each request and deciding and
 * reserving each replica (`placeReplica`); every replica is a full decision (the engine's
 * shortcut for siblings of an unschedulable replica is not used). Runs on one thread.
 * `placementsPerSecond` is decisions per wall-clock second; `cpuPlacementsPerSecond` divides by
 * the process's CPU time instead, which is steadier on a shared machine. V8 runs single-threaded
 * (garbage collection and compilation on the one core), so both count all the work.
 */
import { spawnSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";

// Run on the TypeScript sources: re-execute once under the `development` export condition (as
// vitest does), so no build is needed. `--single-threaded` keeps V8's garbage
// collector and compiler on the main thread: the benchmark measures one core, all work included.
if (!process.env.PERSYS_BENCH_CHILD) {
  const child = spawnSync(
    process.execPath,
    [
      ...process.execArgv.filter((a) => !a.startsWith("--conditions")),
      "--conditions=development",
      "--single-threaded",
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ],
    { stdio: "inherit", env: { ...process.env, PERSYS_BENCH_CHILD: "1" } },
  );
  process.exit(child.status ?? 1);
}

const { ClusterSnapshot, SchedulerEngine } = await import("../../controlplane/src/scheduler/index.js");
const { generateCluster, generateWorkloads, zoneNames } = await import(
  "../../controlplane/src/scheduler/simulation/index.js"
);
type PlacementDiagnosis = import("../../controlplane/src/scheduler/index.js").PlacementDiagnosis;
type AllocationStrategy = import("../../controlplane/src/scheduler/index.js").AllocationStrategy;

interface Args {
  sizes: number[];
  workloads: number | undefined;
  replicas: number | undefined;
  seed: number;
  strategy: AllocationStrategy;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    sizes: [100, 1000, 5000, 10000],
    workloads: undefined,
    replicas: undefined,
    seed: 1,
    strategy: "least-allocated",
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--nodes") args.sizes = [Number(value)];
    else if (flag === "--workloads") args.workloads = Number(value);
    else if (flag === "--replicas") args.replicas = Number(value);
    else if (flag === "--seed") args.seed = Number(value);
    else if (flag === "--strategy") args.strategy = value as AllocationStrategy;
    else throw new Error(`unknown flag ${flag} (use --nodes, --workloads, --replicas, --seed, --strategy)`);
    i++;
  }
  return args;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function run(nodeCount: number, workloadCount: number, seed: number, strategy: AllocationStrategy) {
  const nodes = generateCluster({ nodes: nodeCount, seed });
  const workloads = generateWorkloads({ count: workloadCount, seed, zones: zoneNames(nodeCount) });
  const snapshot = new ClusterSnapshot();
  for (const node of nodes) snapshot.upsertNode(node);
  const engine = new SchedulerEngine(snapshot, { seed, strategy });

  const totalReplicas = workloads.reduce((sum, w) => sum + w.replicas, 0);
  const durations = new Float64Array(totalReplicas);
  const diagnoses: PlacementDiagnosis[] = new Array(totalReplicas);
  let decisions = 0;
  let placed = 0;
  const cpuStart = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (const request of workloads) {
    let t0 = process.hrtime.bigint();
    const compiled = engine.compile(request);
    for (let replica = 0; replica < compiled.replicas; replica++) {
      const decision = engine.placeReplica(compiled, replica);
      const t1 = process.hrtime.bigint();
      durations[decisions] = Number(t1 - t0) / 1000;
      diagnoses[decisions++] = decision.diagnosis;
      if (decision.nodeId !== null) placed++;
      t0 = t1;
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;

  let bytes = 0;
  for (const d of diagnoses) bytes += Buffer.byteLength(JSON.stringify(d));
  const overcommitted = nodes.filter((n) => {
    const r = snapshot.reservedOn(n.id);
    const a = n.allocatable;
    return r.cpuMillicores > a.cpuMillicores || r.memoryMiB > a.memoryMiB || r.diskGiB > a.diskGiB;
  }).length;
  durations.sort();
  return {
    nodes: nodeCount,
    workloads: workloadCount,
    decisions,
    placed,
    pending: decisions - placed,
    seconds: Number(seconds.toFixed(3)),
    placementsPerSecond: Math.round(decisions / seconds),
    cpuPlacementsPerSecond: Math.round(decisions / cpuSeconds),
    p50Us: Number(percentile(durations, 50).toFixed(1)),
    p99Us: Number(percentile(durations, 99).toFixed(1)),
    maxUs: Number(durations[durations.length - 1]!.toFixed(1)),
    diagnosisBytes: Math.round(bytes / Math.max(1, decisions)),
    nodeClasses: snapshot.classes.all.length,
    cachedShapes: engine.cachedShapes,
    overcommittedNodes: overcommitted,
    heapMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    strategy,
    seed,
    node: process.version,
    singleThreaded: process.execArgv.includes("--single-threaded"),
    loadAverage: os.loadavg()[0]!.toFixed(2),
  };
}

/** One workload with `replicas` replicas spread over zones: how per-decision cost grows with k. */
function runReplicas(nodeCount: number, replicas: number, seed: number, strategy: AllocationStrategy) {
  const nodes = generateCluster({ nodes: nodeCount, seed });
  const snapshot = new ClusterSnapshot();
  for (const node of nodes) snapshot.upsertNode(node);
  const engine = new SchedulerEngine(snapshot, { seed, strategy });
  const compiled = engine.compile({
    workloadId: "big",
    kind: "container",
    replicas,
    resources: { cpuMillicores: 100, memoryMiB: 128, diskGiB: 0 },
    labels: { app: "big" },
    placement: { spread: [{ labelKey: "topology.persys.io/zone", maxSkew: 1 }] },
  });
  const durations = new Float64Array(replicas);
  let placed = 0;
  for (let r = 0; r < replicas; r++) {
    const t0 = process.hrtime.bigint();
    if (engine.placeReplica(compiled, r).nodeId !== null) placed++;
    durations[r] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  const tenth = Math.max(1, Math.floor(replicas / 10));
  const mean = (a: Float64Array) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
  return {
    scenario: "replicas",
    nodes: nodeCount,
    replicas,
    placed,
    firstTenthMeanUs: Number(mean(durations.subarray(0, tenth)).toFixed(1)),
    lastTenthMeanUs: Number(mean(durations.subarray(replicas - tenth)).toFixed(1)),
    p50Us: Number(percentile(durations.slice().sort(), 50).toFixed(1)),
    p99Us: Number(percentile(durations.slice().sort(), 99).toFixed(1)),
    node: process.version,
    loadAverage: os.loadavg()[0]!.toFixed(2),
  };
}

const args = parseArgs(process.argv.slice(2));
// Warm the JIT on a small cluster first so the first size is not charged for compilation.
run(500, 5000, args.seed + 1000, args.strategy);
for (const size of args.sizes) {
  const result =
    args.replicas === undefined
      ? run(size, args.workloads ?? size * 10, args.seed, args.strategy)
      : runReplicas(size, args.replicas, args.seed, args.strategy);
  console.log(JSON.stringify(result));
}
