/**
 * The SDK against a real control plane (in process, embedded stores) with simulated nodes: what a
 * user's app does — apply, wait, explain, list, watch, control, delete — and what it sees when
 * things go wrong (no node fits, a terminal failure, bad input, an unreachable server).
 */
import { api, compose, container, PersysClient, PersysError, WaitError, type WorkloadWatchEvent } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { type SdkCluster, simNode, startSdkCluster, until } from "./sdk-cluster.js";

let cluster: SdkCluster;
let client: PersysClient;

beforeAll(async () => {
  cluster = await startSdkCluster([simNode("n1"), simNode("n2", { labels: { zone: "b" } })]);
  client = cluster.client;
});
afterAll(async () => {
  await cluster?.close();
});

const small = (id: string, extra: Partial<Parameters<typeof container>[0]> = {}) =>
  container({ id, image: "persys-test/web:1", cpuMillicores: 100, memoryMiB: 64, ...extra });

describe("workloads", () => {
  it("applies a container, waits until running, explains it, and deletes it", async () => {
    const web = small("web", { replicas: 2, ports: [{ container: 80, host: 8080 }], labels: { app: "web" } });
    const first = await client.workloads.apply(web);
    expect([first.created, first.changed]).toEqual([true, true]);
    const again = await client.workloads.apply(web);
    expect([again.created, again.changed]).toEqual([false, false]);

    const running = await client.workloads.waitFor("web", "running", { timeoutMs: 15_000 });
    expect(running.status?.readyReplicas).toBe(2);
    expect(running.status?.replicas.map((r) => r.nodeId).sort()).toEqual(["n1", "n2"]);

    const explanation = await client.workloads.explain("web");
    expect(explanation.revision).toBe(running.status?.revision);
    for (const replica of explanation.replicas) {
      expect(replica.diagnosis?.winnerNodeId).toBe(replica.nodeId);
      expect(replica.diagnosis?.nodesEvaluated).toBe(2);
    }
    const full = await client.workloads.get("web");
    expect(full.status?.replicas[0]?.placement?.winnerNodeId).toBeTruthy();
    expect(full.status?.replicas[0]?.endpoints[0]).toMatchObject({ port: 8080, targetPort: 80 });

    const deleting = await client.workloads.delete("web");
    expect(deleting?.status?.state).toBe(api.WorkloadState.WORKLOAD_STATE_DELETING);
    await client.workloads.waitFor("web", "deleted", { timeoutMs: 15_000 });
    expect(await client.workloads.find("web")).toBeUndefined();
    await expect(client.workloads.get("web")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(client.workloads.delete("web")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(client.workloads.delete("web", { allowMissing: true })).resolves.toBeUndefined();
  });

  it("lists page by page with filters, each page carrying its store revision", async () => {
    for (const id of ["list-a", "list-b", "list-c"])
      await client.workloads.apply(small(id, { labels: { suite: "list" } }));
    await client.workloads.apply(compose({ id: "list-stack", inlineYaml: "services: {}", labels: { suite: "list" } }));
    const pages = [];
    for await (const page of client.workloads.list({ labelSelector: "suite=list", pageSize: 3 }).pages())
      pages.push(page);
    expect(pages.map((p) => p.items.map((w) => w.id))).toEqual([["list-a", "list-b", "list-c"], ["list-stack"]]);
    expect(pages[0]!.storeRevision).toBeGreaterThan(0);
    const composes = await client.workloads.list({ labelSelector: "suite=list", kind: "compose" }).toArray();
    expect(composes.map((w) => w.id)).toEqual(["list-stack"]);
    expect(() => client.workloads.list({ kind: "lambda" as "vm" })).toThrow(
      /kind: "lambda" is not one of container, compose, vm/,
    );
  });

  it("stops, starts, restarts and retries", async () => {
    await client.workloads.apply(small("ctl"));
    await client.workloads.waitFor("ctl", "running", { timeoutMs: 15_000 });
    await client.workloads.stop("ctl");
    const stopped = await client.workloads.waitFor("ctl", "stopped", { timeoutMs: 15_000 });
    expect(stopped.desiredState).toBe(api.DesiredState.DESIRED_STATE_STOPPED);
    await client.workloads.start("ctl");
    await client.workloads.waitFor("ctl", "running", { timeoutMs: 15_000 });
    const restarted = await client.workloads.restart("ctl");
    expect(restarted.id).toBe("ctl");
    const retried = await client.workloads.retry("ctl");
    expect(retried.retriedReplicas).toEqual([]);
  });

  it("rejects waitFor with the diagnosis when no node fits, and plan says why", async () => {
    const big = small("too-big", { memoryMiB: 9_000 });
    const plan = await client.workloads.plan(big);
    expect(plan.schedulable).toBe(false);
    expect(plan.replicas[0]?.diagnosis?.message).toMatch(/0\/2 nodes are available: 2 insufficient memory/);
    await client.workloads.apply(big);
    const error = (await client.workloads
      .waitFor("too-big", "running", { timeoutMs: 1_500 })
      .catch((e) => e)) as WaitError;
    expect(error).toBeInstanceOf(WaitError);
    expect(error.outcome).toBe("timeout");
    expect(error.lastStatus?.state).toBe(api.WorkloadState.WORKLOAD_STATE_PENDING);
    expect(error.explanation?.replicas[0]?.diagnosis?.filterCounts[0]?.plugin).toBe("resources-fit");
    expect(error.message).toMatch(
      /not running after 1.5s: state pending, 0\/1 ready; replica 0 pending: .*insufficient memory/,
    );
  });

  it("rejects waitFor at once on a failure Persys does not retry", async () => {
    for (const node of cluster.nodes) {
      node.failNextApply("broken", { code: "IMAGE_NOT_FOUND", message: "image nope:1 not found", retryable: false });
    }
    await client.workloads.apply(small("broken", { image: "nope:1" }));
    const started = Date.now();
    const error = (await client.workloads
      .waitFor("broken", "running", { timeoutMs: 20_000 })
      .catch((e) => e)) as WaitError;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect([error.outcome, error.code]).toEqual(["failed", "IMAGE_NOT_FOUND"]);
    expect(error.message).toContain("image nope:1 not found");
  });

  it("watches a workload from added to deleted", async () => {
    const controller = new AbortController();
    const seen: WorkloadWatchEvent[] = [];
    const watching = (async () => {
      for await (const event of client.workloads.watch({ workloadId: "watched", signal: controller.signal })) {
        seen.push(event);
        if (event.type === "deleted") controller.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await client.workloads.apply(small("watched"));
    await client.workloads.waitFor("watched", "running", { timeoutMs: 15_000 });
    await client.workloads.delete("watched");
    await watching;
    expect(seen[0]?.type).toBe("added");
    expect(seen.at(-1)?.type).toBe("deleted");
    expect(seen.some((e) => e.workload.status?.state === api.WorkloadState.WORKLOAD_STATE_RUNNING)).toBe(true);
    const revisions = seen.map((e) => e.storeRevision);
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  });

  it("stops a watch and a call when their signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const events: WorkloadWatchEvent[] = [];
    for await (const e of client.workloads.watch({ workloadId: "never", signal: controller.signal })) events.push(e);
    expect(events).toEqual([]);
    const aborted = new AbortController();
    aborted.abort();
    await expect(client.cluster.summary({ signal: aborted.signal })).rejects.toMatchObject({ code: "CANCELLED" });
  });
});

describe("nodes, cluster and events", () => {
  it("lists, cordons, drains and uncordons nodes", async () => {
    const nodes = await client.nodes.list().toArray();
    expect(nodes.map((n) => n.id)).toEqual(["n1", "n2"]);
    expect((await client.nodes.list({ labelSelector: "zone=b" }).toArray()).map((n) => n.id)).toEqual(["n2"]);
    const cordoned = await client.nodes.cordon("n1", { reason: "disk swap" });
    expect([cordoned.cordoned, cordoned.cordonReason]).toEqual([true, "disk swap"]);
    const dry = await client.nodes.drain("n1", { dryRun: true });
    expect(dry.node.draining).toBe(false);
    const back = await client.nodes.uncordon("n1");
    expect(back.cordoned).toBe(false);
    await expect(client.nodes.get("nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("summarises the cluster", async () => {
    const summary = await client.cluster.summary();
    expect([summary.nodesTotal, summary.nodesReady]).toEqual([2, 2]);
    expect(summary.version).toBeTruthy();
    expect(summary.allocatable?.memoryMib).toBe(4096);
  });

  it("lists a workload's events and follows new ones", async () => {
    const controller = new AbortController();
    const followed: api.Event[] = [];
    const following = (async () => {
      for await (const e of client.workloads.events("evented", { follow: true, signal: controller.signal })) {
        followed.push(e);
        if (e.type === "ReplicaPlaced") controller.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await client.workloads.apply(small("evented"));
    await following;
    expect(followed.map((e) => e.type).slice(0, 2)).toEqual(["WorkloadApplied", "ReplicaPlaced"]);
    const listed = [];
    for await (const e of client.workloads.events("evented")) listed.push(e);
    expect(listed.slice(0, 2).map((e) => e.id)).toEqual(followed.slice(0, 2).map((e) => e.id));
    expect(listed.every((e) => e.workloadId === "evented")).toBe(true);
  });
});

describe("configuration and failures", () => {
  it("finds the endpoint in the environment", async () => {
    const fromEnv = PersysClient.fromEnvironment({
      env: { PERSYS_ENDPOINT: cluster.endpoint },
      configPath: "/nonexistent",
    });
    try {
      expect((await fromEnv.cluster.summary()).nodesTotal).toBe(2);
      expect(fromEnv.address).toBe(cluster.endpoint);
    } finally {
      fromEnv.close();
    }
  });

  it("refuses an invalid spec before any network call, naming every bad field", async () => {
    const offline = new PersysClient({ endpoint: `127.0.0.1:${await freePort()}` });
    try {
      const bad = api.Workload.fromPartial({
        id: "Bad",
        kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
        spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "" }) },
      });
      const started = Date.now();
      const error = (await offline.workloads.apply(bad).catch((e) => e)) as PersysError;
      expect(Date.now() - started).toBeLessThan(100);
      expect(error.code).toBe("INVALID_SPEC");
      expect(error.details.map((d) => d.path)).toEqual(["id", "container.image"]);
      await expect(offline.workloads.plan(bad)).rejects.toMatchObject({ code: "INVALID_SPEC" });
    } finally {
      offline.close();
    }
  });

  it("fails with UNAVAILABLE (retryable) when nothing listens, after retrying", async () => {
    const offline = new PersysClient({
      endpoint: `127.0.0.1:${await freePort()}`,
      retry: { maxAttempts: 3, initialBackoffMs: 50 },
    });
    try {
      const error = (await offline.cluster.summary().catch((e) => e)) as PersysError;
      expect(error).toBeInstanceOf(PersysError);
      expect([error.code, error.retryable]).toEqual(["UNAVAILABLE", true]);
    } finally {
      offline.close();
    }
  });

  it("has the server's typed errors: code, field path, retryable", async () => {
    await client.workloads.apply(small("immutable"));
    const asCompose = compose({ id: "immutable", inlineYaml: "services: {}" });
    const error = (await client.workloads.apply(asCompose).catch((e) => e)) as PersysError;
    expect([error.code, error.retryable, error.details[0]?.path]).toEqual(["INVALID_SPEC", false, "kind"]);
    const stale = await client.workloads.apply(small("immutable"), { expectedRevision: "0000" }).catch((e) => e);
    expect(stale).toMatchObject({ code: "CONFLICT" });
  });

  it("waits until a node appears for a pending workload", async () => {
    await client.workloads.apply(small("needs-kvm", { placement: { requiredCapabilities: ["kvm"] } }));
    const waiting = client.workloads.waitFor("needs-kvm", "running", { timeoutMs: 20_000 });
    await until(
      "pending with a diagnosis",
      async () => (await client.workloads.explain("needs-kvm")).replicas[0]?.diagnosis,
    );
    await cluster.addNode(simNode("kvm1", { capabilities: ["kvm"] }));
    const running = await waiting;
    expect(running.status?.replicas[0]?.nodeId).toBe("kvm1");
  });
});
