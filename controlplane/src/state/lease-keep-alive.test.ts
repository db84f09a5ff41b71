import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { startKeepAliveLoop } from "./lease-keep-alive.js";
import type { LeaseGrant } from "./state-store.js";

const grant = (ttl: number): LeaseGrant => ({ id: "1", ttl });

describe("keep-alive loop", () => {
  it("renews at once and then every third of the TTL until stopped", async () => {
    const calls: number[] = [];
    const start = Date.now();
    const loop = startKeepAliveLoop({
      lease: "1",
      renew: async () => {
        calls.push(Date.now() - start);
        return grant(0.3);
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 450));
    loop.stop();
    expect(await loop.ended).toBeUndefined();
    expect(calls[0]).toBeLessThan(50);
    // Every 100 ms over 450 ms: 5 calls, fewer if timers run late on a loaded machine, never more.
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls.length).toBeLessThanOrEqual(6);
  });

  it("ends at once with NOT_FOUND when the lease is gone", async () => {
    const loop = startKeepAliveLoop({
      lease: "1",
      renew: async () => {
        throw new PersysError("NOT_FOUND", "lease 1 not found");
      },
    });
    expect((await loop.ended)?.code).toBe("NOT_FOUND");
  });

  it("retries retryable failures and reports UNAVAILABLE once the TTL has passed without a renewal", async () => {
    let attempts = 0;
    const loop = startKeepAliveLoop({
      lease: "1",
      retryDelayMs: 20,
      renew: async () => {
        attempts++;
        if (attempts === 1) return grant(0.2);
        throw new PersysError("UNAVAILABLE", "etcd down");
      },
    });
    const started = Date.now();
    const reason = await loop.ended;
    expect(reason?.code).toBe("UNAVAILABLE");
    expect(reason?.details.map((d) => d.path)).toEqual(["lease"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    expect(attempts).toBeGreaterThan(3);
  });

  it("keeps going through a short outage", async () => {
    let attempts = 0;
    const loop = startKeepAliveLoop({
      lease: "1",
      retryDelayMs: 10,
      renew: async () => {
        attempts++;
        if (attempts === 2 || attempts === 3) throw new PersysError("UNAVAILABLE", "blip");
        return grant(0.3);
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    loop.stop();
    expect(await loop.ended).toBeUndefined();
    expect(attempts).toBeGreaterThanOrEqual(4); // renewed again after the two failures
  });
});
