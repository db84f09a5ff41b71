import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { type KeepAliveStream, LeaseRenewalStream } from "./lease-renewal-stream.js";

/** A LeaseKeepAlive stream the test answers by hand. */
class FakeStream extends EventEmitter implements KeepAliveStream {
  readonly written: string[] = [];
  cancelled = false;
  write(request: { ID: string }) {
    this.written.push(request.ID);
    return true;
  }
  cancel() {
    this.cancelled = true;
  }
  answer(ID: string, TTL: string) {
    this.emit("data", { ID, TTL });
  }
}

function fixture(timeoutMs = 1000) {
  const streams: FakeStream[] = [];
  const renewals = new LeaseRenewalStream(async () => {
    const s = new FakeStream();
    streams.push(s);
    return s;
  }, timeoutMs);
  return { renewals, streams };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("lease renewals over one stream", () => {
  it("sends every renewal on one stream and answers each caller by lease id, in order", async () => {
    const { renewals, streams } = fixture();
    const a1 = renewals.renew("1");
    const b = renewals.renew("2");
    const a2 = renewals.renew("1");
    await turn();
    expect(streams).toHaveLength(1);
    expect(streams[0]!.written).toEqual(["1", "2", "1"]);
    streams[0]!.answer("2", "10");
    streams[0]!.answer("1", "9");
    streams[0]!.answer("1", "0"); // revoked between the two renewals
    expect(await Promise.all([a1, b, a2])).toEqual(["9", "10", "0"]);
    expect(streams[0]!.cancelled).toBe(false);
  });

  it("fails the waiting renewals when the stream fails and opens a new stream for the next", async () => {
    const { renewals, streams } = fixture();
    const waiting = renewals.renew("1");
    await turn();
    streams[0]!.emit("error", new Error("connection reset"));
    await expect(waiting).rejects.toThrow("connection reset");
    const next = renewals.renew("1");
    await turn();
    expect(streams).toHaveLength(2);
    streams[1]!.answer("1", "5");
    expect(await next).toBe("5");
  });

  it("times a renewal out without disturbing the others", async () => {
    const { renewals, streams } = fixture(50);
    const slow = renewals.renew("1");
    await expect(slow).rejects.toMatchObject({ code: "DEADLINE_EXCEEDED" });
    const fine = renewals.renew("1");
    await turn();
    streams[0]!.answer("1", "3");
    expect(await fine).toBe("3");
  });

  it("refuses renewals after close and cancels the stream", async () => {
    const { renewals, streams } = fixture();
    const pending = renewals.renew("1");
    await turn();
    renewals.close();
    await expect(pending).rejects.toMatchObject({ code: "UNAVAILABLE" });
    await turn();
    expect(streams[0]!.cancelled).toBe(true);
    await expect(renewals.renew("1")).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});
