/**
 * Conformance: leases — grant, TTL query, keep-alive, expiry and revocation deleting the attached keys
 * with delete events.
 */
import type { StateStore } from "@persys/controlplane";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bytes,
  paths,
  rejection,
  type StateStoreHarness,
  sleep,
  summary,
  uniquePrefix,
  WatchRecorder,
} from "./state-store-helpers.js";

/** etcd's minimum TTL with default settings; shorter requests are raised to it. */
const TTL = 2;

export function describeLeases(harness: StateStoreHarness): void {
  describe("leases", () => {
    let store: StateStore;
    beforeAll(async () => {
      store = await harness.open();
    });
    afterAll(() => store?.close());

    it("grant gives an id and the TTL; timeToLive reports the remaining TTL and the attached keys", async () => {
      const p = uniquePrefix("lease-ttl");
      const lease = await store.grantLease(30);
      expect(lease.id).toMatch(/^[1-9][0-9]*$/);
      expect(lease.ttl).toBe(30);
      await store.put(`${p}b`, bytes("2"), { lease: lease.id });
      await store.put(`${p}a`, bytes("1"), { lease: lease.id });
      expect((await store.get(`${p}a`))?.lease).toBe(lease.id);
      const status = await store.leaseTimeToLive(lease.id);
      expect(status).toMatchObject({ id: lease.id, grantedTtl: 30, keys: [`${p}a`, `${p}b`] });
      expect(status!.ttl).toBeGreaterThan(25);
      expect(status!.ttl).toBeLessThanOrEqual(30);
      expect((await store.keepAliveOnce(lease.id)).ttl).toBe(30);
      await store.revokeLease(lease.id);
    });

    it("keep-alive holds a lease past its TTL; once stopped, expiry deletes its keys with delete events", async () => {
      const p = uniquePrefix("lease-expiry");
      const lease = await store.grantLease(TTL);
      expect(lease.ttl).toBeGreaterThanOrEqual(1);
      const first = await store.put(`${p}node-1`, bytes("up"), { lease: lease.id });
      await store.put(`${p}node-2`, bytes("up"), { lease: lease.id });
      await store.put(`${p}durable`, bytes("no lease"));
      const recorder = new WatchRecorder();
      const watch = await store.watch(p, { afterRevision: first.revision - 1, onEvents: recorder.onEvents });

      const keeper = store.keepAlive(lease.id);
      await sleep(lease.ttl * 1000 * 2);
      expect((await store.range(p)).kvs.map((kv) => kv.key.slice(p.length))).toEqual(["durable", "node-1", "node-2"]);
      keeper.stop();
      expect(await keeper.ended).toBeUndefined();

      await recorder.until(
        (events) => events.filter((e) => e.type === "delete").length === 2,
        "two delete events",
        (lease.ttl + 5) * 1000,
      );
      await watch.cancel();
      const deletes = recorder.events.filter((e) => e.type === "delete");
      expect(deletes.map((e) => e.key)).toEqual([`${p}node-1`, `${p}node-2`]);
      expect(deletes[0]!.revision).toBe(deletes[1]!.revision);
      expect((await store.range(p)).kvs.map((kv) => kv.key.slice(p.length))).toEqual(["durable"]);
      expect(await store.leaseTimeToLive(lease.id)).toBeUndefined();
      expect(paths(await rejection(store.keepAliveOnce(lease.id), "NOT_FOUND"))).toEqual(["lease"]);
      const late = await rejection(store.put(`${p}node-1`, bytes("again"), { lease: lease.id }), "NOT_FOUND");
      expect(paths(late)).toEqual(["lease"]);
      expect(await store.get(`${p}node-1`)).toBeUndefined();
    });

    it("revoke deletes the attached keys at one revision with delete events; revoking again is a no-op", async () => {
      const p = uniquePrefix("lease-revoke");
      const lease = await store.grantLease(60);
      await store.put(`${p}x`, bytes("1"), { lease: lease.id });
      await store.put(`${p}y`, bytes("2"), { lease: lease.id });
      const recorder = new WatchRecorder();
      const watch = await store.watch(p, { onEvents: recorder.onEvents });
      const revoked = await store.revokeLease(lease.id);
      expect(revoked.revoked).toBe(true);
      await recorder.untilCount(2);
      await watch.cancel();
      expect(recorder.events.map(summary)).toEqual([
        `delete ${p}x@${revoked.revision}`,
        `delete ${p}y@${revoked.revision}`,
      ]);
      expect((await store.range(p)).kvs).toEqual([]);
      const again = await store.revokeLease(lease.id);
      expect(again.revoked).toBe(false);
      expect(again.revision).toBeGreaterThanOrEqual(revoked.revision);
    });

    it("a put without a lease detaches the key: revoking the lease leaves it", async () => {
      const p = uniquePrefix("lease-detach");
      const lease = await store.grantLease(60);
      await store.put(`${p}k`, bytes("leased"), { lease: lease.id });
      await store.put(`${p}k`, bytes("kept"));
      expect((await store.get(`${p}k`))?.lease).toBeUndefined();
      expect((await store.leaseTimeToLive(lease.id))?.keys).toEqual([]);
      await store.revokeLease(lease.id);
      expect((await store.get(`${p}k`))?.version).toBe(2);
    });

    it("a continuous keep-alive ends with NOT_FOUND when its lease is revoked", async () => {
      const lease = await store.grantLease(TTL);
      const keeper = store.keepAlive(lease.id);
      await sleep(200);
      await store.revokeLease(lease.id);
      const reason = await Promise.race([keeper.ended, sleep(lease.ttl * 1000 + 3000).then(() => "still running")]);
      keeper.stop();
      expect(typeof reason === "object" && reason?.code).toBe("NOT_FOUND");
    });
  });
}
