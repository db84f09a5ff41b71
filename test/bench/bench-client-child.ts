/**
 * The user side of bench:controlplane in its own process, so neither the submitting gRPC client nor
 * the observing etcd watches are charged to the control plane's thread. Forked with IPC: the options
 * come as JSON in argv[2]. It opens the watches and sends {type:"ready"}; on {type:"submit"} it applies
 * the workloads through the public gRPC API, waits until each one's assignment is durable in etcd (seen
 * by its own etcd client), and answers {type:"placed"} with the figures; {type:"writes"} answers how
 * many etcd revisions under the run's prefix it has seen so far, by key kind since the last reset.
 * Times are epoch milliseconds with sub-millisecond precision, comparable across processes.
 */
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { openStateStore } from "@persys/controlplane";
import { api } from "@persys/schema";

const options = JSON.parse(process.argv[2]!) as {
  address: string;
  endpoints: string[];
  prefix: string;
  workloads: number;
  concurrency: number;
  /** Workloads per call: 1 sends ApplyWorkload, more send ApplyWorkloads. */
  batch: number;
};
const now = () => performance.timeOrigin + performance.now();
const send = (m: object) => process.send!(m);

const observer = await openStateStore({ kind: "etcd", endpoints: options.endpoints, prefix: options.prefix });
const placedAt = new Map<string, number>();
const assignments = "assignments/";
// One watch of the whole prefix (two would make etcd send, and this process decode, every event twice):
// assignments' first puts time the placements; every revision under the run's prefix counts as a write
// (the etcd revision is global: other clients would count).
const revisionsSeen = new Set<number>();
let keysByKind: Record<string, number> = {};
const everything = await observer.watch("", {
  onEvents: (batch) => {
    const at = now();
    for (const e of batch.events) {
      revisionsSeen.add(e.revision);
      const slash = e.key.indexOf("/");
      const kind = slash < 0 ? e.key : e.key.slice(0, slash);
      keysByKind[kind] = (keysByKind[kind] ?? 0) + 1;
      if (e.type !== "put" || !e.key.startsWith(assignments)) continue;
      const id = e.key.slice(assignments.length, e.key.indexOf("/", assignments.length));
      if (!placedAt.has(id)) placedAt.set(id, at);
    }
  },
});

const client = new api.WorkloadServiceClient(options.address, credentials.createInsecure());
const done = (resolve: () => void, reject: (e: unknown) => void) => (error: ServiceError | null) =>
  error ? reject(error) : resolve();
const apply = (ws: api.Workload[]) =>
  new Promise<void>((resolve, reject) =>
    ws.length === 1
      ? client.applyWorkload({ workload: ws[0] }, done(resolve, reject))
      : client.applyWorkloads({ workloads: ws }, done(resolve, reject)),
  );

async function submitAll() {
  const submittedAt = new Map<string, number>();
  let next = 0;
  let failures = 0;
  const t0 = now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.workloads) {
        const batch: api.Workload[] = [];
        while (batch.length < options.batch && next < options.workloads) {
          const i = next++;
          const id = `bench-${i}`;
          batch.push(
            api.Workload.fromPartial({
              id,
              kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
              resources: { cpuMillicores: 50 + (i % 4) * 25, memoryMib: 32 + (i % 8) * 16 },
              labels: { app: `a${i % 50}` },
              spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/web:1" }) },
            }),
          );
          submittedAt.set(id, now());
        }
        await apply(batch).catch(() => (failures += batch.length));
      }
    }),
  );
  const submittedUntil = now();
  const deadline = Date.now() + 600_000;
  while (placedAt.size < options.workloads - failures && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  const cpu = process.cpuUsage(cpu0);
  const latencies = [...placedAt].map(([id, at]) => at - (submittedAt.get(id) ?? at));
  send({
    type: "placed",
    t0,
    submitSeconds: (submittedUntil - t0) / 1000,
    lastPlacedAt: Math.max(...placedAt.values()),
    placed: placedAt.size,
    failures,
    latencies,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  });
}

process.on("message", (m: { type: string; reset?: boolean }) => {
  if (m.type === "submit") void submitAll();
  if (m.type === "writes") {
    // The watch trails the store slightly.
    setTimeout(() => {
      send({ type: "writes", count: revisionsSeen.size, byKind: keysByKind });
      if (m.reset) keysByKind = {};
    }, 500);
  }
});
process.on("disconnect", () => {
  client.close();
  void everything
    .cancel()
    .then(() => observer.close())
    .then(() => process.exit(0));
});
send({ type: "ready" });
