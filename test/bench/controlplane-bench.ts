/**
 * Control-plane throughput with simulated agents and real etcd.
 *
 *   npm run bench:controlplane -- --nodes 5000 --workloads 20000 [--etcd URL] [--concurrency 64] [--idle-seconds 60]
 *
 * The simulated agents run in a child process. Submits workloads through the public gRPC API, measures when each one's assignment is durable in
 * etcd (watched with a separate client), then lets the cluster idle with every node heartbeating and
 * counts etcd writes. Prints one JSON object.
 */
import { fork } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { loadServerConfig, openStateStore } from "@persys/controlplane";
import { api } from "@persys/schema";
import pino from "pino";
import { runServer } from "../../controlplane/src/cli/run-server.js";

const { values: flags } = parseArgs({
  options: {
    nodes: { type: "string", default: "5000" },
    workloads: { type: "string", default: "20000" },
    etcd: { type: "string", default: process.env.PERSYS_TEST_ETCD_ENDPOINTS ?? "http://127.0.0.1:2379" },
    concurrency: { type: "string", default: "64" },
    "idle-seconds": { type: "string", default: "60" },
    "heartbeat-ms": { type: "string", default: "10000" },
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
      "nodes-lease-ttl-seconds": "30",
      "nodes-lost-after-seconds": "120",
      "reconciler-concurrency": "256",
      "reconciler-push-concurrency": "512",
      "reconciler-resync-seconds": "300",
      "log-level": "error",
      insecure: "true",
    },
  });
  const server = await runServer(config, { logger: pino({ level: "error" }) });
  await server.controlPlane.whenLeader();
  const fleet = await startFleetProcess({
    controlPlane: server.grpcAddress,
    nodes: nodeCount,
    heartbeatIntervalMs: Number(flags["heartbeat-ms"]),
  });
  await new Promise((r) => setTimeout(r, 1_000));

  // Durable assignments, seen by a separate etcd client.
  const observer = await openStateStore({ kind: "etcd", endpoints, prefix });
  const placedAt = new Map<string, number>();
  const assignments = `assignments/`;
  const watch = await observer.watch(assignments, {
    onEvents: (batch) => {
      const now = performance.now();
      for (const e of batch.events) {
        if (e.type !== "put") continue;
        const id = e.key.slice(assignments.length).split("/")[0]!;
        if (!placedAt.has(id)) placedAt.set(id, now);
      }
    },
  });
  // Writes under this run's prefix only (the etcd revision is global: other clients would count).
  const revisionsSeen = new Set<number>();
  let keysByKind: Record<string, number> = {};
  const everything = await observer.watch("", {
    onEvents: (batch) => {
      for (const e of batch.events) {
        revisionsSeen.add(e.revision);
        const kind = e.key.split("/")[0]!;
        keysByKind[kind] = (keysByKind[kind] ?? 0) + 1;
      }
    },
  });
  const writesSoFar = async () => {
    await new Promise((r) => setTimeout(r, 500)); // the watch trails the store slightly
    return { count: revisionsSeen.size };
  };

  const client = new api.WorkloadServiceClient(server.grpcAddress, credentials.createInsecure());
  const apply = (w: api.Workload) =>
    new Promise<void>((resolve, reject) =>
      client.applyWorkload({ workload: w }, (error: ServiceError | null) => (error ? reject(error) : resolve())),
    );
  const submittedAt = new Map<string, number>();
  let next = 0;
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < workloadCount) {
        const i = next++;
        const id = `bench-${i}`;
        const workload = api.Workload.fromPartial({
          id,
          kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
          resources: { cpuMillicores: 50 + (i % 4) * 25, memoryMib: 32 + (i % 8) * 16 },
          labels: { app: `a${i % 50}` },
          spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/web:1" }) },
        });
        submittedAt.set(id, performance.now());
        await apply(workload).catch(() => failures++);
      }
    }),
  );
  const submitSeconds = (performance.now() - t0) / 1000;
  const deadline = Date.now() + 600_000;
  while (placedAt.size < workloadCount - failures && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const lastPlaced = Math.max(...placedAt.values());
  const placeSeconds = (lastPlaced - t0) / 1000;
  const latencies = [...placedAt].map(([id, at]) => at - (submittedAt.get(id) ?? at)).sort((a, b) => a - b);
  const afterPlacement = (await writesSoFar()).count;

  // Steady state: every node keeps heartbeating, nothing changes. Replicas report RUNNING with their
  // next heartbeat after placement, so the idle window starts once one more heartbeat round is in.
  await server.controlPlane.settled();
  await new Promise((r) => setTimeout(r, Number(flags["heartbeat-ms"]) * 1.5));
  await server.controlPlane.settled();
  const idleStart = (await writesSoFar()).count;
  keysByKind = {};
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const idleWrites = (await writesSoFar()).count - idleStart;

  const stats = await fleet.stats();
  console.log(
    JSON.stringify({
      nodes: nodeCount,
      workloads: workloadCount,
      submitFailures: failures,
      placed: placedAt.size,
      submittedPerSecond: Math.round(workloadCount / submitSeconds),
      placedPerSecond: Math.round(placedAt.size / placeSeconds),
      submitToAssignmentP50Ms: Math.round(percentile(latencies, 50)),
      submitToAssignmentP99Ms: Math.round(percentile(latencies, 99)),
      etcdWritesPerPlacement: Number((afterPlacement / Math.max(1, placedAt.size)).toFixed(2)),
      idleSeconds,
      idleEtcdWritesPerMinute: Math.round((idleWrites / idleSeconds) * 60),
      idleKeysWrittenByKind: keysByKind,
      heartbeatsDuringRun: stats.heartbeats,
      rssMiB: Math.round(process.memoryUsage().rss / 1024 / 1024),
    }),
  );
  await watch.cancel();
  await everything.cancel();
  await observer.close();
  client.close();
  await fleet.close();
  await server.close();
}

/** The simulated agents run in a child process (test/bench/sim-fleet-child.ts): only the control plane is measured here. */
async function startFleetProcess(options: { controlPlane: string; nodes: number; heartbeatIntervalMs: number }) {
  const child = fork(join(import.meta.dirname, "sim-fleet-child.ts"), [JSON.stringify(options)], {
    execArgv: ["--import", "tsx", "--conditions=development"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`the simulated fleet exited (${code}) before it was ready`)));
  });
  return {
    stats: () =>
      new Promise<{ heartbeats: number }>((resolve) => {
        child.once("message", (m: { stats: { heartbeats: number } }) => resolve(m.stats));
        child.send({ type: "stats" });
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
