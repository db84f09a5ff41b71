/**
 * Control-plane throughput with simulated agents and real etcd.
 *
 *   npm run bench:controlplane -- --nodes 5000 --workloads 20000 [--etcd URL] [--concurrency 64] [--idle-seconds 60]
 *
 * This process is the control plane alone: the simulated agents run in one child process
 * (sim-fleet-child.ts), the user in another (bench-client-child.ts), which submits workloads through the
 * public gRPC API and measures when each one's assignment is durable in etcd (watched with its own
 * client). Then the cluster idles with every node heartbeating and the etcd writes are counted. Prints
 * one JSON object, with the CPU time each process spent per placement.
 */
import { fork } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadServerConfig, openStateStore } from "@persys/controlplane";
import pino from "pino";
import { runServer } from "../../controlplane/src/cli/run-server.js";

const { values: flags } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    workloads: { type: "string", default: "20000" },
    etcd: { type: "string", default: process.env.PERSYS_TEST_ETCD_ENDPOINTS ?? "http://127.0.0.1:2379" },
    concurrency: { type: "string", default: "64" },
    batch: { type: "string", default: "1" },
    /** Events in Redis (as a production cluster keeps them); without it, the embedded store. */
    redis: { type: "string" },
    "idle-seconds": { type: "string", default: "60" },
    "heartbeat-ms": { type: "string", default: "10000" },
    /** Workloads the reconciler works on at once (each holds its slot across its etcd commit); default: the server's. */
    "reconciler-concurrency": { type: "string" },
  },
});
const nodeCount = Number(flags.nodes);
const workloadCount = Number(flags.workloads);
const concurrency = Number(flags.concurrency);
const idleSeconds = Number(flags["idle-seconds"]);
const endpoints = flags.etcd!.split(",");
const prefix = `/persys-bench/${Date.now().toString(36)}/`;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function main() {
  const config = loadServerConfig({
    flags: {
      "data-dir": mkdtempSync(join(tmpdir(), "persys-bench-")),
      "listen-grpc": "127.0.0.1:0",
      "listen-http": "127.0.0.1:0",
      "state-kind": "etcd",
      "state-endpoints": endpoints.join(","),
      "state-prefix": prefix,
      ...(flags.redis
        ? { "events-kind": "redis", "events-url": flags.redis, "events-prefix": prefix.replaceAll("/", ":") }
        : {}),
      "nodes-lease-ttl-seconds": "30",
      "nodes-lost-after-seconds": "120",
      ...(flags["reconciler-concurrency"] ? { "reconciler-concurrency": flags["reconciler-concurrency"] } : {}),
      "reconciler-push-concurrency": "512",
      "reconciler-resync-seconds": "300",
      "log-level": "error",
      insecure: "true",
    },
  });
  const server = await runServer(config, { logger: pino({ level: "error" }) });
  await server.controlPlane.whenLeader();
  const fleet = await startChild("sim-fleet-child.ts", {
    controlPlane: server.grpcAddress,
    nodes: nodeCount,
    heartbeatIntervalMs: Number(flags["heartbeat-ms"]),
  });
  await new Promise((r) => setTimeout(r, 1_000));

  const clientProcess = await startChild("bench-client-child.ts", {
    address: server.grpcAddress,
    endpoints,
    prefix,
    workloads: workloadCount,
    concurrency,
    batch: Number(flags.batch),
  });
  const writesSoFar = (reset = false) =>
    clientProcess.ask<{ count: number; byKind: Record<string, number> }>({ type: "writes", reset }, "writes");

  const etcdPid = etcdProcessOf(endpoints[0]!);
  const cpu0 = process.cpuUsage();
  const etcdCpu0 = etcdPid ? cpuMsOfProcess(etcdPid) : 0;
  const fleetCpu0 = (await fleet.ask<{ stats: FleetStats }>({ type: "stats" }, "stats")).stats.cpuMs;
  const run = await clientProcess.ask<{
    t0: number;
    submitSeconds: number;
    lastPlacedAt: number;
    placed: number;
    failures: number;
    latencies: number[];
    clientCpuMs: number;
  }>({ type: "submit" }, "placed");
  const serverCpu = process.cpuUsage(cpu0);
  const etcdCpuMs = etcdPid ? cpuMsOfProcess(etcdPid) - etcdCpu0 : undefined;
  const fleetCpuMs = (await fleet.ask<{ stats: FleetStats }>({ type: "stats" }, "stats")).stats.cpuMs - fleetCpu0;
  const placeSeconds = (run.lastPlacedAt - run.t0) / 1000;
  const latencies = run.latencies.sort((a, b) => a - b);
  const afterPlacement = (await writesSoFar()).count;
  const perPlacement = (ms: number | undefined) =>
    ms === undefined ? undefined : Number((ms / Math.max(1, run.placed)).toFixed(3));

  // Steady state: every node keeps heartbeating, nothing changes. Replicas report RUNNING with their
  // next heartbeat after placement, so the idle window starts once one more heartbeat round is in.
  await server.controlPlane.settled();
  await new Promise((r) => setTimeout(r, Number(flags["heartbeat-ms"]) * 1.5));
  await server.controlPlane.settled();
  const idleStart = (await writesSoFar(true)).count;
  const idleCpu0 = {
    controlPlane: process.cpuUsage(),
    etcd: etcdPid ? cpuMsOfProcess(etcdPid) : 0,
    fleet: (await fleet.ask<{ stats: FleetStats }>({ type: "stats" }, "stats")).stats.cpuMs,
  };
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const idle = await writesSoFar();
  const idleServerCpu = process.cpuUsage(idleCpu0.controlPlane);
  const idleShare = (ms: number) => Math.round(ms / (idleSeconds * 10));
  const idleCpuPercent = {
    controlPlane: idleShare((idleServerCpu.user + idleServerCpu.system) / 1000),
    etcd: etcdPid ? idleShare(cpuMsOfProcess(etcdPid) - idleCpu0.etcd) : undefined,
    fleet: idleShare((await fleet.ask<{ stats: FleetStats }>({ type: "stats" }, "stats")).stats.cpuMs - idleCpu0.fleet),
  };
  const idleWrites = idle.count - idleStart;

  const stats = (await fleet.ask<{ stats: FleetStats }>({ type: "stats" }, "stats")).stats;
  console.log(
    JSON.stringify({
      nodes: nodeCount,
      workloads: workloadCount,
      batch: Number(flags.batch),
      events: flags.redis ? "redis" : "embedded",
      submitFailures: run.failures,
      placed: run.placed,
      submittedPerSecond: Math.round(workloadCount / run.submitSeconds),
      placedPerSecond: Math.round(run.placed / placeSeconds),
      submitToAssignmentP50Ms: Math.round(percentile(latencies, 50)),
      submitToAssignmentP99Ms: Math.round(percentile(latencies, 99)),
      etcdWritesPerPlacement: Number((afterPlacement / Math.max(1, run.placed)).toFixed(2)),
      // CPU time per durable placement over the submit-to-last-assignment window, by process.
      cpuMsPerPlacement: {
        controlPlane: perPlacement((serverCpu.user + serverCpu.system) / 1000),
        etcd: perPlacement(etcdCpuMs),
        fleet: perPlacement(fleetCpuMs),
        client: perPlacement(run.clientCpuMs),
      },
      idleSeconds,
      idleEtcdWritesPerMinute: Math.round((idleWrites / idleSeconds) * 60),
      idleKeysWrittenByKind: idle.byKind,
      // Share of one core each process spends while every node heartbeats and nothing changes.
      idleCpuPercent,
      heartbeatsDuringRun: stats.heartbeats,
      // Heartbeats that failed (an overloaded control plane answers late) or found their node forgotten.
      heartbeatFailures: stats.heartbeatFailures,
      heartbeatsNotFound: stats.notFound,
      rssMiB: Math.round(process.memoryUsage().rss / 1024 / 1024),
      loadAverage: loadavg()[0]!.toFixed(1),
    }),
  );
  await clientProcess.close();
  await fleet.close();
  await server.close();
  // Leave etcd as we found it: a store that keeps every run's keys and revisions grows by hundreds
  // of MB a run and slows the runs after it.
  const cleanup = await openStateStore({ kind: "etcd", endpoints });
  await cleanup.deletePrefix(prefix);
  await cleanup.compact(await cleanup.currentRevision());
  await cleanup.close();
}

interface FleetStats {
  heartbeats: number;
  heartbeatFailures: number;
  notFound: number;
  cpuMs: number;
}

/** The local etcd serving `endpoint` (its pid), found by its listen URL; undefined when not local. */
function etcdProcessOf(endpoint: string): number | undefined {
  const port = new URL(endpoint).port || "2379";
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv[0]?.endsWith("etcd") && argv.some((a) => a.includes(`:${port}`))) return Number(pid);
    } catch {
      // The process ended meanwhile.
    }
  }
  return undefined;
}

/** User plus system CPU of a process in ms, from /proc (clock ticks of 10 ms on Linux). */
function cpuMsOfProcess(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A bench part in its own process (test/bench/<file>), answering IPC messages by type. */
async function startChild(file: string, options: object) {
  const child = fork(join(import.meta.dirname, file), [JSON.stringify(options)], {
    // The same young generation as the control plane's (package.json): the fleet spent a fifth of its
    // busy time in GC with V8's default, CPU the machine then lacks for the control plane.
    execArgv: ["--max-semi-space-size=64", "--import", "tsx", "--conditions=development"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`${file} exited (${code}) before it was ready`)));
  });
  return {
    ask: <T>(message: object, answer: string) =>
      new Promise<T>((resolve) => {
        const onMessage = (m: { type: string }) => {
          if (m.type !== answer) return;
          child.off("message", onMessage);
          resolve(m as T);
        };
        child.on("message", onMessage);
        child.send(message);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.disconnect();
      }),
  };
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
