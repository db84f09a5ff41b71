/**
 * How many simulated nodes one process sustains. Starts a fake AgentControl in a child process (so
 * this process is measured alone), a fleet of `--nodes` nodes behind one shared endpoint, optionally
 * has the child apply `--replicas` replicas through the shared endpoint at `--apply-rate` per second,
 * then measures a steady window: heartbeats per second (expected nodes / interval), each node's
 * largest gap between heartbeats, heartbeat arrivals per 100 ms (spread), event-loop delay, CPU and
 * RSS. Prints one JSON line per phase.
 *
 *   npx tsx --conditions=development test/support/sim-agents/fleet-bench.ts \
 *     --nodes 5000 --interval 5000 --replicas 20000 --apply-rate 3000 --window 30 [--settle 10]
 *     [--debounce 50] [--no-prompt] [--mode shared] [--concurrency 256]
 *
 * `errors` counts the fleet's failed RegisterNode/Heartbeat calls by message; `applied` is the
 * child's ApplyWorkload throughput and latency. NODE_OPTIONS=--max-semi-space-size=64 trades memory
 * for fewer scavenges.
 */
import { fork } from "node:child_process";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { simulatedNodes } from "./cluster-nodes.js";
import { startFleet } from "./simulated-fleet.js";

const { values: flags } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    interval: { type: "string", default: "5000" },
    replicas: { type: "string", default: "0" },
    "apply-rate": { type: "string", default: "3000" },
    concurrency: { type: "string", default: "256" },
    window: { type: "string", default: "30" },
    settle: { type: "string", default: "10" },
    debounce: { type: "string", default: "50" },
    "no-prompt": { type: "boolean", default: false },
    mode: { type: "string", default: "shared" },
  },
});
const NODES = Number(flags.nodes);
const INTERVAL = Number(flags.interval);
const REPLICAS = Number(flags.replicas);
const WINDOW_S = Number(flags.window);

const child = fork(fileURLToPath(new URL("./fake-control-process.ts", import.meta.url)), {
  execArgv: ["--import", "tsx", "--conditions=development"],
});
type Reply = Record<string, unknown> & { type: string; id?: number };
const waiting = new Map<number, (m: Reply) => void>();
let ids = 0;
child.on("message", (m: Reply) => {
  waiting.get(m.id ?? 0)?.(m);
  waiting.delete(m.id ?? 0);
});
/** Sends a request to the child and resolves with its answer (id 0 is the child's "ready"). */
const ask = (m: object | undefined) =>
  new Promise<Reply>((resolve) => {
    const id = m ? ++ids : 0;
    waiting.set(id, resolve);
    if (m) child.send({ ...m, id });
  });
const ready = (await ask(undefined)) as Reply & { address: string };

const gc = { pauseMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.pauseMs += e.duration;
    gc.maxMs = Math.max(gc.maxMs, e.duration);
  }
}).observe({ entryTypes: ["gc"] });

const mb = (n: number) => Math.round(n / 1048576);
function sample() {
  const m = process.memoryUsage();
  return { rssMiB: mb(m.rss), heapUsedMiB: mb(m.heapUsed) };
}
const print = (line: object) => console.log(JSON.stringify(line));

const rss0 = sample();
const t0 = Date.now();
const fleet = await startFleet({
  controlPlane: ready.address,
  nodes: simulatedNodes({ count: NODES, seed: 7 }),
  heartbeatIntervalMs: INTERVAL,
  startDelayMs: 20,
  endpointMode: flags.mode as "shared" | "per-node",
  rampUpMs: Math.min(INTERVAL, NODES),
  registrationTimeoutMs: 120_000,
  nodeOptions: { reportDebounceMs: Number(flags.debounce), promptReports: !flags["no-prompt"] },
});
const errors = new Map<string, number>();
for (const n of fleet.nodes) {
  n.on("rpcError", (rpc, e) => {
    const key = `${rpc}: ${e.message.slice(0, 60)}`;
    errors.set(key, (errors.get(key) ?? 0) + 1);
  });
}
print({ phase: "registered", nodes: NODES, ms: Date.now() - t0, before: rss0, after: sample() });

async function window(name: string, seconds: number, during?: Promise<Reply>) {
  await ask({ type: "stats" }); // reset the child's window
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const hb0 = fleet.stats();
  gc.pauseMs = 0;
  gc.maxMs = 0;
  const start = Date.now();
  const applied = during ? await during : undefined;
  const rest = seconds * 1000 - (Date.now() - start);
  if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  const wallMs = Date.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const hb1 = fleet.stats();
  const server = await ask({ type: "stats" });
  loop.disable();
  print({
    phase: name,
    nodes: NODES,
    intervalMs: INTERVAL,
    wallMs,
    heartbeatsPerSec: Math.round(((hb1.heartbeats - hb0.heartbeats) * 1000) / wallMs),
    expectedPerSec: Math.round((NODES * 1000) / INTERVAL),
    promptReportsPerSec: Math.round(((hb1.promptReports - hb0.promptReports) * 1000) / wallMs),
    heartbeatFailures: hb1.heartbeatFailures - hb0.heartbeatFailures,
    cpuShare: Number(((cpu.user + cpu.system) / 1000 / wallMs).toFixed(3)),
    loopDelayP99Ms: Number((loop.percentile(99) / 1e6).toFixed(1)),
    loopDelayMaxMs: Number((loop.max / 1e6).toFixed(1)),
    gcShare: Number((gc.pauseMs / wallMs).toFixed(3)),
    gcMaxPauseMs: Math.round(gc.maxMs),
    nodeMaxGapP99Ms: server.maxGapP99Ms,
    nodeMaxGapMaxMs: server.maxGapMaxMs,
    arrivalsPer100msMean: Number(Number(server.bucket100msMean).toFixed(1)),
    arrivalsPer100msMax: server.bucket100msMax,
    fakeControlPlaneCpuShare: server.cpuShare,
    replicas: hb1.replicas,
    applied,
    errors: Object.fromEntries(errors),
    ...sample(),
  });
  errors.clear();
}

await window("steady", WINDOW_S);
if (REPLICAS > 0) {
  const applying = ask({
    type: "apply",
    endpoint: fleet.endpoint ?? "",
    nodeIds: fleet.nodes.map((n) => n.id),
    count: REPLICAS,
    ratePerSec: Number(flags["apply-rate"]),
    concurrency: Number(flags.concurrency),
  });
  await window("applying", 1, applying);
  await new Promise((r) => setTimeout(r, Number(flags.settle) * 1000)); // let the apply backlog drain
  await window("steady-with-replicas", WINDOW_S);
}
await fleet.close();
child.disconnect();
