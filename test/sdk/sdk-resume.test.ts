/**
 * Resumable streams across a real server restart: a `persys server` child process on embedded
 * stores is killed (SIGKILL) mid-stream and started again on the same port and data folder. The
 * event watch must resume after the last event id and the workload watch after the last store
 * revision, so that nothing is lost and nothing is delivered twice; a waitFor in flight must survive.
 */
import { api, PersysClient, type ReconnectInfo, type WorkloadWatchEvent } from "@persys/sdk";
import { afterAll, expect, it } from "vitest";
import type { SimulatedNode } from "../support/sim-agents/index.js";
import { attachSimNode, type RestartableServer, simNode, startServerChild, until } from "./sdk-cluster.js";

let server: RestartableServer | undefined;
let client: PersysClient | undefined;
const nodes: SimulatedNode[] = [];

afterAll(async () => {
  client?.close();
  await Promise.allSettled(nodes.map((n) => n.close()));
  await server?.kill("SIGTERM");
});

const workload = (id: string, extra: Partial<Parameters<typeof api.Workload.fromPartial>[0]> = {}) =>
  api.Workload.fromPartial({
    id,
    kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
    resources: { cpuMillicores: 100, memoryMib: 64 },
    spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/web:1" }) },
    ...extra,
  });

const idOrder = (a: string, b: string) => {
  const [am, as] = a.split("-").map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split("-").map(BigInt) as [bigint, bigint];
  return am === bm ? Number(as - bs) : am < bm ? -1 : 1;
};

it("resumes watches and waits across a server restart without losing or repeating anything", async () => {
  server = await startServerChild();
  client = new PersysClient({ endpoint: server.endpoint });
  const reconnects = { events: [] as ReconnectInfo[], workloads: [] as ReconnectInfo[] };
  nodes.push(await attachSimNode(server.endpoint, client, simNode("n1")));

  const stop = new AbortController();
  const events: api.Event[] = [];
  const changes: WorkloadWatchEvent[] = [];
  const eventWatch = (async () => {
    for await (const e of client.events.watch({
      signal: stop.signal,
      onReconnect: (i) => reconnects.events.push(i),
    }))
      events.push(e);
  })();
  const workloadWatch = (async () => {
    for await (const c of client.workloads.watch({
      signal: stop.signal,
      onReconnect: (i) => reconnects.workloads.push(i),
    }))
      changes.push(c);
  })();
  await new Promise((r) => setTimeout(r, 300));

  await client.workloads.apply(workload("before-a"));
  await client.workloads.apply(workload("before-b"));
  await client.workloads.waitFor("before-a", "running", { timeoutMs: 15_000 });
  await client.workloads.waitFor("before-b", "running", { timeoutMs: 15_000 });
  // Pending until a kvm node joins — after the restart. Its wait must survive the restart.
  await client.workloads.apply(
    workload("across", { placement: api.Placement.fromPartial({ requiredCapabilities: ["kvm"] }) }),
  );
  const across = client.workloads.waitFor("across", "running", { timeoutMs: 90_000 });
  await until("the watch saw every workload", () => new Set(changes.map((c) => c.workload.id)).size === 3);
  const eventsBefore = events.length;

  await server.kill("SIGKILL");
  await until("both watches noticed", () => reconnects.events.length > 0 && reconnects.workloads.length > 0);
  await server.start();

  nodes.push(await attachSimNode(server.endpoint, client, simNode("kvm1", { capabilities: ["kvm"] })));
  await client.workloads.apply(workload("after"));
  await client.workloads.waitFor("after", "running", { timeoutMs: 30_000 });
  const acrossRunning = await across;
  expect(acrossRunning.status?.replicas[0]?.nodeId).toBe("kvm1");
  await until(
    "the watches caught up",
    () =>
      events.some((e) => e.workloadId === "after" && e.type === "ReplicaApplied") &&
      changes.some(
        (c) => c.workload.id === "after" && c.workload.status?.state === api.WorkloadState.WORKLOAD_STATE_RUNNING,
      ),
    20_000,
  );
  await new Promise((r) => setTimeout(r, 1_000));
  stop.abort();
  await Promise.all([eventWatch, workloadWatch]);

  // Events: strictly increasing ids (nothing twice), and exactly the recorded ones in that range (nothing lost).
  const ids = events.map((e) => e.id);
  expect(events.length).toBeGreaterThan(eventsBefore);
  expect([...ids].sort(idOrder)).toEqual(ids);
  expect(new Set(ids).size).toBe(ids.length);
  const recorded = (await client.events.list({ pageSize: 1000 }).toArray())
    .map((e) => e.id)
    .filter((id) => idOrder(id, ids[0]!) >= 0 && idOrder(id, ids.at(-1)!) <= 0);
  expect(ids).toEqual(recorded);
  expect(events.map((e) => `${e.type}/${e.workloadId}`)).toEqual(
    expect.arrayContaining(["WorkloadApplied/before-a", "WorkloadApplied/after", "ReplicaPlaced/across"]),
  );

  // Workload changes: one "added" per workload, no change delivered twice, and the last one seen is the current state.
  const added = changes.filter((c) => c.type === "added").map((c) => c.workload.id);
  expect(added.sort()).toEqual(["across", "after", "before-a", "before-b"]);
  const byId = new Map<string, string[]>();
  for (const c of changes) {
    const list = byId.get(c.workload.id) ?? [];
    list.push(JSON.stringify(api.Workload.toJSON(c.workload)));
    byId.set(c.workload.id, list);
  }
  for (const [id, versions] of byId) {
    versions.forEach((v, i) => {
      if (i > 0) expect(v, `${id}: change ${i} repeats the one before`).not.toBe(versions[i - 1]);
    });
    const current = await client.workloads.get(id, { view: "basic" });
    expect(JSON.parse(versions.at(-1)!).status.state, id).toBe(api.WorkloadState[current.status!.state]);
  }
  const storeRevisions = changes.map((c) => c.storeRevision);
  expect([...storeRevisions].sort((a, b) => a - b)).toEqual(storeRevisions);
}, 180_000);
