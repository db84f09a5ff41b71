/**
 * The etcd store across a dropped connection: a private etcd is killed and restarted under a running
 * watch. Calls made while it is down fail with retryable typed errors; the watch resumes from its last
 * delivered revision and delivers every later event exactly once, in order.
 */
import { EtcdStateStore } from "@persys/controlplane";
import { PersysError } from "@persys/schema";
import { afterAll, describe, expect, it } from "vitest";
import { bytes, summary, uniquePrefix, WatchRecorder } from "../conformance/state-store-helpers.js";
import { type PrivateServer, startPrivateEtcd } from "../support/private-servers.js";

/** Retries `fn` on retryable errors until it succeeds or `timeoutMs` passes. */
async function retrying<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof PersysError) || !error.retryable || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

describe("etcd state store across an etcd restart", () => {
  let server: (PrivateServer & { endpoints: string[] }) | undefined;
  const stores: EtcdStateStore[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });

  it("fails calls with retryable typed errors while etcd is down and resumes the watch exactly", async () => {
    server = await startPrivateEtcd();
    console.info(`etcd watch reconnect: private etcd at ${server.endpoints.join(",")}`);
    const watcher = await EtcdStateStore.open({ endpoints: server.endpoints, requestTimeoutMs: 2000 });
    stores.push(watcher);
    const p = uniquePrefix("reconnect");
    const recorder = new WatchRecorder();
    const watch = await watcher.watch(p, { onEvents: recorder.onEvents });
    const expected: string[] = [];
    const write = async (store: EtcdStateStore, i: number) => {
      const { revision } = await retrying(() => store.put(`${p}k${i % 3}`, bytes(`v${i}`)));
      expected.push(`put ${p}k${i % 3}@${revision}=v${i}`);
    };
    for (let i = 0; i < 5; i++) await write(watcher, i);
    await recorder.untilCount(5);

    await server.stop({ hard: true });
    const down = await watcher.put(`${p}while-down`, bytes("x")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(down).toBeInstanceOf(PersysError);
    expect((down as PersysError).retryable).toBe(true);
    expect(["UNAVAILABLE", "DEADLINE_EXCEEDED"]).toContain((down as PersysError).code);

    await server.start();
    // A second client writes right away, before the watch's backoff lets it reconnect.
    const writer = await retrying(() => EtcdStateStore.open({ endpoints: server!.endpoints }));
    stores.push(writer);
    for (let i = 5; i < 12; i++) await write(writer, i);
    const deleted = await writer.delete(`${p}k0`);
    expected.push(`delete ${p}k0@${deleted.revision}`);

    await recorder.untilCount(expected.length, 45_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await watch.cancel();
    expect(recorder.events.map(summary)).toEqual(expected);
    expect(watch.lastRevision).toBe(deleted.revision);
  });
});
