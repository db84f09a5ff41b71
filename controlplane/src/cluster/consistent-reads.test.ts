import { describe, expect, it } from "vitest";
import { ConsistentReads } from "./consistent-reads.js";

/** A store whose revision reads the test answers by hand, and a cache that is at `applied`. */
function fixture() {
  const reads: Array<(revision: number) => void> = [];
  const waits: number[] = [];
  const consistent = new ConsistentReads(
    { currentRevision: () => new Promise<number>((resolve) => reads.push(resolve)) },
    {
      waitFor: async (revision: number) => {
        waits.push(revision);
      },
    },
  );
  return { consistent, reads, waits };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("consistent reads from the cache", () => {
  it("shares one store read among callers that arrive before it starts", async () => {
    const f = fixture();
    const callers = [f.consistent.sync(), f.consistent.sync(), f.consistent.sync()];
    await turn();
    expect(f.reads).toHaveLength(1);
    f.reads[0]!(42);
    await Promise.all(callers);
    expect(f.waits).toEqual([42, 42, 42]);
  });

  it("gives a caller that arrives during a read a later read of its own (it must see writes acknowledged meanwhile)", async () => {
    const f = fixture();
    const early = f.consistent.sync();
    await turn();
    const late = f.consistent.sync(); // the first read is in flight: it may predate late's writes
    const later = f.consistent.sync();
    await turn();
    expect(f.reads).toHaveLength(1); // at most one read in flight
    f.reads[0]!(10);
    await early;
    await turn();
    expect(f.reads).toHaveLength(2);
    f.reads[1]!(11);
    await Promise.all([late, later]);
    expect(f.waits).toEqual([10, 11, 11]);
  });

  it("fails the callers of a failed read and recovers on the next call", async () => {
    const store = {
      calls: 0,
      currentRevision() {
        this.calls++;
        return this.calls === 1 ? Promise.reject(new Error("etcd down")) : Promise.resolve(7);
      },
    };
    const consistent = new ConsistentReads(store, { waitFor: async () => {} });
    await expect(consistent.sync()).rejects.toThrow("etcd down");
    await expect(consistent.sync()).resolves.toBeUndefined();
    expect(store.calls).toBe(2);
  });
});
