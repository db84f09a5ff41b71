/**
 * Leader election on both stores: one leader at a time, fast hand-over on resignation, takeover
 * within the lease TTL when a leader dies without resigning, and fencing of a deposed leader's writes.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { encodeText, LeaderElection, type LeaderTerm, openStateStore, type StateStore } from "@persys/controlplane";
import { afterEach, describe, expect, it } from "vitest";
import { etcdEndpoints, runDir } from "../support/services.js";

interface Harness {
  /** Opens a connection; for etcd each is a separate client, as two servers would have. */
  connect(): Promise<StateStore>;
}

const namespace = `/persys-test/leader-${process.pid}-${Date.now().toString(36)}/`;
const harnesses: Record<string, () => Harness> = {
  etcd: () => ({ connect: () => openStateStore({ kind: "etcd", endpoints: etcdEndpoints(), prefix: namespace }) }),
  embedded: () => {
    let shared: Promise<StateStore> | undefined;
    const dir = mkdtempSync(join(runDir(), "leader-"));
    return { connect: () => (shared ??= openStateStore({ kind: "embedded", dataDir: dir })) };
  },
};

const until = async (check: () => boolean, timeoutMs: number) => {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
};

describe.each(Object.keys(harnesses))("leader election on %s", (name) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => {});
  });

  async function candidate(harness: Harness, id: string, key: string, ttlSeconds = 2) {
    const store = await harness.connect();
    const events: string[] = [];
    let term: LeaderTerm | undefined;
    const election = new LeaderElection(store, {
      key,
      id,
      ttlSeconds,
      onElected: (t) => {
        term = t;
        events.push(`elected:${t.token}`);
      },
      onDeposed: (_, reason) => events.push(`deposed:${reason}`),
    });
    election.start();
    cleanup.push(async () => {
      await election.stop();
      if (name === "etcd") await store.close();
    });
    return { store, election, events, term: () => term };
  }

  it("elects exactly one of two candidates and hands over at once on resignation", async () => {
    const harness = harnesses[name]!();
    const key = `election-${Date.now()}`;
    const a = await candidate(harness, "a", key);
    await until(() => a.election.isLeader, 5_000);
    const b = await candidate(harness, "b", key);
    await new Promise((r) => setTimeout(r, 300));
    expect([a.election.isLeader, b.election.isLeader]).toEqual([true, false]);
    expect(await b.election.leaderId()).toBe("a");

    await a.election.stop();
    const handover = await until(() => b.election.isLeader, 2_000);
    expect(handover).toBeLessThan(1_500);
    expect(b.term()!.token).toBeGreaterThan(a.term()!.token);
    expect(a.events.at(-1)).toBe("deposed:stopped");
  });

  it("takes over within the lease TTL when the leader dies without resigning", async () => {
    const harness = harnesses[name]!();
    const key = `election-dead-${Date.now()}`;
    const store = await harness.connect();
    // A leader that dies: it holds the key on a lease nobody renews any more.
    const lease = await store.grantLease(2);
    await store.put(key, encodeText(JSON.stringify({ id: "dead", since: new Date().toISOString() })), {
      lease: lease.id,
    });
    const b = await candidate(harness, "b", key);
    await new Promise((r) => setTimeout(r, 200));
    expect(b.election.isLeader).toBe(false);
    const waited = await until(() => b.election.isLeader, 6_000);
    expect(waited).toBeLessThan(4_500);
  });

  it("fences a deposed leader: its guarded writes fail after the term ends", async () => {
    const harness = harnesses[name]!();
    const key = `election-fence-${Date.now()}`;
    const a = await candidate(harness, "a", key);
    await until(() => a.election.isLeader, 5_000);
    const fence = a.term()!.fence;
    const write = () =>
      a.store.txn({ compare: [fence], success: [{ type: "put", key: `${key}-data`, value: encodeText("x") }] });
    expect((await write()).succeeded).toBe(true);
    const b = await candidate(harness, "b", key);
    await a.election.stop();
    await until(() => b.election.isLeader, 2_000);
    expect((await write()).succeeded).toBe(false);
  });
});
