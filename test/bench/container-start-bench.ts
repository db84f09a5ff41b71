/**
 * Container start latency: Docker directly vs. Persys end to end, side by side in one process, and
 * the agent's memory.
 *
 *   npm run bench:container-start -- [--n 20] [--etcd URL --redis URL] [--rss-containers 100] [--no-rss]
 *
 * - docker: create + start of persys-test/web:1 through the Docker Engine API until it runs;
 * - persys: ApplyWorkload through the control plane's gRPC API until WatchWorkloads shows the replica
 *   RUNNING, with a real agent (in this process) starting the container on the same Docker.
 * Runs alternate (docker, persys, docker, ...) after two warm-up runs of each, so both see the same
 * machine load. Then a separate `persys-agent` process is measured idle and with 100 containers.
 * Prints one JSON object: {dockerP50Ms, persysP50Ms, ratio, persysP99Ms, ..., agentRssIdleMiB, agentRss100MiB}.
 * Needs Docker at /var/run/docker.sock and the test images (test/fixtures/build-images.sh).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { credentials, Metadata } from "@grpc/grpc-js";
import { loadAgentConfig, NodeAgent } from "@persys/agent";
import { loadServerConfig } from "@persys/controlplane";
import { api } from "@persys/schema";
import Docker from "dockerode";
import pino from "pino";
import { runServer } from "../../controlplane/src/cli/run-server.js";

const { values: flags } = parseArgs({
  options: {
    n: { type: "string", default: "20" },
    etcd: { type: "string" },
    redis: { type: "string" },
    "rss-containers": { type: "string", default: "100" },
    "no-rss": { type: "boolean", default: false },
  },
});
const N = Number(flags.n);
const IMAGE = "persys-test/web:1";
const RSS_IMAGE = "persys-test/busybox:1";
const root = resolve(import.meta.dirname, "../..");
const bench = Date.now().toString(36);
const docker = new Docker({ socketPath: "/var/run/docker.sock" });

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const round = (x: number) => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function dockerStart(i: number): Promise<number> {
  const t0 = performance.now();
  const c = await docker.createContainer({
    name: `bench-${bench}-docker-${i}`,
    Image: IMAGE,
    Labels: { "persys.bench": bench },
    ExposedPorts: { "8080/tcp": {} },
    HostConfig: { RestartPolicy: { Name: "on-failure", MaximumRetryCount: 0 } },
  });
  await c.start();
  return performance.now() - t0;
}

function persysClient(address: string) {
  const client = new api.WorkloadServiceClient(address, credentials.createInsecure());
  /**
   * Applies, then resolves when the workload's watch shows replica 0 RUNNING: the elapsed ms. The
   * watch starts right after the apply; from revision 0 it opens with the current state (ADDED), so
   * nothing is missed whichever lands first.
   */
  const start = (id: string) =>
    new Promise<number>((resolvePromise, reject) => {
      const t0 = performance.now();
      client.applyWorkload(
        api.ApplyWorkloadRequest.fromPartial({
          workload: {
            id,
            kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
            labels: { "persys-bench": bench },
            spec: {
              $case: "container",
              value: api.ContainerSpec.fromPartial({
                image: IMAGE,
                ports: [{ containerPort: 8080 }],
                stopTimeoutSeconds: 1,
              }),
            },
          },
        }),
        new Metadata(),
        (error) => {
          if (error) reject(error);
        },
      );
      const watch = client.watchWorkloads(
        api.WatchWorkloadsRequest.fromPartial({ workloadId: id, view: api.WorkloadView.WORKLOAD_VIEW_BASIC }),
        new Metadata(),
      );
      const timer = setTimeout(() => reject(new Error(`${id} not running within 60 s`)), 60_000);
      watch.on("data", (event: api.WatchWorkloadsResponse) => {
        if (event.workload?.status?.replicas[0]?.state === api.ReplicaState.REPLICA_STATE_RUNNING) {
          const elapsed = performance.now() - t0;
          clearTimeout(timer);
          watch.cancel();
          resolvePromise(elapsed);
        }
      });
      watch.on("error", () => {});
    });
  const remove = (id: string) =>
    new Promise<void>((r) => client.deleteWorkload({ workloadId: id, allowMissing: true }, new Metadata(), () => r()));
  return { start, remove, close: () => client.close() };
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}

/** A persys-agent process (built dist when present, else sources under tsx) and its RSS idle and loaded. */
async function measureRss(grpcAddress: string, httpUrl: string, containers: number) {
  const nodeId = `bench-rss-${bench}`;
  const dist = join(root, "agent/dist/cli/persys-agent.js");
  const entry = existsSync(dist)
    ? [dist]
    : ["--import", "tsx", "--conditions=development", join(root, "agent/src/cli/persys-agent.ts")];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...entry,
      "--node-id",
      nodeId,
      "--control-plane-endpoints",
      grpcAddress,
      "--listen-grpc",
      "127.0.0.1:0",
      "--listen-metrics",
      "127.0.0.1:0",
      "--state-dir",
      mkdtempSync(join(tmpdir(), "persys-bench-agent-")),
      "--node-labels",
      "bench=rss",
      "--log-level",
      "error",
      "--insecure",
      "true",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const rest = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${httpUrl}${path}`, {
      method,
      ...(body ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
    });
    return (await r.json().catch(() => ({}))) as any;
  };
  try {
    for (let i = 0; i < 300 && !(await rest("GET", `/v1/nodes/${nodeId}`)).node; i++) await sleep(100);
    await sleep(5_000);
    const idle = rssMiB(child.pid!);
    const wid = `bench-rss-${bench}`;
    await rest("PUT", `/v1/workloads/${wid}`, {
      kind: "WORKLOAD_KIND_CONTAINER",
      replicas: containers,
      placement: { nodeSelector: { bench: "rss" } },
      container: { image: RSS_IMAGE, stopTimeoutSeconds: 1 },
    });
    const deadline = Date.now() + 600_000;
    while ((await rest("GET", `/v1/workloads/${wid}`)).workload?.status?.readyReplicas !== containers) {
      if (Date.now() > deadline) throw new Error(`${containers} containers not running within 10 min`);
      await sleep(500);
    }
    await sleep(12_000); // one round of stats sampling and a few heartbeats with every replica
    const loaded = rssMiB(child.pid!);
    await rest("DELETE", `/v1/workloads/${wid}`);
    for (let i = 0; i < 600 && (await rest("GET", `/v1/workloads/${wid}`)).workload; i++) await sleep(500);
    return { idle, loaded, source: existsSync(dist) ? "dist" : "tsx" };
  } finally {
    child.kill("SIGTERM");
    for (const c of await docker.listContainers({
      all: true,
      filters: JSON.stringify({ label: [`persys.node=${nodeId}`] }),
    }))
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {});
  }
}

async function main() {
  await docker.getImage(IMAGE).inspect();
  const dataDir = mkdtempSync(join(tmpdir(), "persys-bench-"));
  const config = loadServerConfig({
    flags: {
      "data-dir": dataDir,
      "listen-grpc": "127.0.0.1:0",
      "listen-http": "127.0.0.1:0",
      "log-level": "error",
      insecure: "true",
      ...(flags.etcd
        ? { "state-kind": "etcd", "state-endpoints": flags.etcd, "state-prefix": `/persys-bench/${bench}/` }
        : {}),
      ...(flags.redis
        ? { "events-kind": "redis", "events-url": flags.redis, "events-prefix": `persys-bench:${bench}:` }
        : {}),
    },
  });
  const server = await runServer(config, { logger: pino({ level: "error" }) });
  await server.controlPlane.whenLeader();
  const nodeId = `bench-${bench}`;
  const agent = await NodeAgent.start(
    loadAgentConfig({
      flags: {
        "node-id": nodeId,
        "control-plane-endpoints": server.grpcAddress,
        "listen-grpc": "127.0.0.1:0",
        "listen-metrics": "127.0.0.1:0",
        "state-dir": join(dataDir, "agent"),
        "log-level": "error",
        insecure: "true",
      },
    }),
    { logger: pino({ level: "error" }) },
  );
  const persys = persysClient(server.grpcAddress);
  const dockerMs: number[] = [];
  const persysMs: number[] = [];
  try {
    for (let i = 0; i < 300 && !agent.session.isRegistered; i++) await sleep(50);
    await sleep(1_000);
    for (let i = -2; i < N; i++) {
      const d = await dockerStart(i + 2);
      const p = await persys.start(`bench-${bench}-${i + 2}`);
      if (i >= 0) {
        dockerMs.push(d);
        persysMs.push(p);
      }
    }
    const rss = flags["no-rss"]
      ? undefined
      : await measureRss(server.grpcAddress, server.httpUrl, Number(flags["rss-containers"]));
    const result = {
      n: N,
      dockerP50Ms: round(percentile(dockerMs, 50)),
      persysP50Ms: round(percentile(persysMs, 50)),
      ratio: Math.round((percentile(persysMs, 50) / percentile(dockerMs, 50)) * 1000) / 1000,
      persysP99Ms: round(percentile(persysMs, 99)),
      dockerP99Ms: round(percentile(dockerMs, 99)),
      ...(rss
        ? {
            agentRssIdleMiB: round(rss.idle),
            agentRss100MiB: round(rss.loaded),
            rssContainers: Number(flags["rss-containers"]),
            agentBuild: rss.source,
          }
        : {}),
      stores: `${config.state.kind}/${config.events.kind}`,
      loadAverage1m: round(loadavg()[0] ?? 0),
    };
    console.log(JSON.stringify(result));
  } finally {
    for (let i = 0; i < N + 2; i++) await persys.remove(`bench-${bench}-${i}`);
    for (let i = 0; i < 600 && agent.replicas.size > 0; i++) await sleep(100);
    persys.close();
    await agent.close();
    await server.close();
    for (const c of await docker.listContainers({
      all: true,
      filters: JSON.stringify({ label: [`persys.bench=${bench}`] }),
    }))
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {});
    for (const c of await docker.listContainers({
      all: true,
      filters: JSON.stringify({ label: [`persys.node=${nodeId}`] }),
    }))
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
