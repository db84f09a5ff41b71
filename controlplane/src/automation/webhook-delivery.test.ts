import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PersysError } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { type AttemptReport, backoffDelay, postWebhook } from "./webhook-delivery.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A receiver on 127.0.0.1 answering each request with the next status (the last one repeats); 0 hangs. */
async function receiver(statuses: number[]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = createServer((req, res) => {
    const status = statuses[Math.min(hits, statuses.length - 1)]!;
    hits++;
    req.resume();
    if (status === 0) return; // never answers: the attempt times out
    res.statusCode = status;
    res.end();
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits: () => hits };
}

const fast = { maxAttempts: 4, timeoutMs: 3000, baseDelayMs: 10, maxDelayMs: 40, random: () => 0.5 };

describe("postWebhook", () => {
  it.each([
    { name: "5xx then success", statuses: [503, 500, 200], result: /HTTP 200 on attempt 3 of 4/, attempts: 3 },
    { name: "success first time", statuses: [204], result: /^webhook answered HTTP 204$/, attempts: 1 },
    {
      name: "4xx is final",
      statuses: [404],
      error: "INVALID_ARGUMENT",
      message: /HTTP 404 \(not retried\)/,
      attempts: 1,
    },
    { name: "429 is retried", statuses: [429, 200], result: /on attempt 2 of 4/, attempts: 2 },
    {
      name: "5xx every time",
      statuses: [502],
      error: "UNAVAILABLE",
      message: /failed 4 attempt\(s\); last: HTTP 502/,
      attempts: 4,
    },
    { name: "timeouts are retried", statuses: [0, 200], result: /on attempt 2 of 4/, attempts: 2, timeoutMs: 300 },
  ])("$name", async ({ statuses, result, error, message, attempts, timeoutMs }) => {
    const r = await receiver(statuses);
    const retries: AttemptReport[] = [];
    const outcome = await postWebhook(
      r.url,
      { a: 1 },
      { ...fast, ...(timeoutMs ? { timeoutMs } : {}), onRetry: async (a) => void retries.push(a) },
    ).catch((e) => e);
    if (error) {
      expect(outcome).toBeInstanceOf(PersysError);
      expect((outcome as PersysError).code).toBe(error);
      expect((outcome as PersysError).message).toMatch(message!);
    } else expect(outcome).toMatch(result!);
    expect(r.hits()).toBe(attempts);
    // Every failed attempt but the last is reported before its retry.
    expect(retries.map((a) => a.attempt)).toEqual(Array.from({ length: attempts - 1 }, (_, i) => i + 1));
  });

  it("retries connection errors and names them", async () => {
    const r = await receiver([200]);
    await new Promise<void>((done) => server!.close(() => done()));
    server = undefined;
    const retries: AttemptReport[] = [];
    const error: unknown = await postWebhook(
      r.url,
      {},
      { ...fast, maxAttempts: 3, onRetry: async (a) => void retries.push(a) },
    ).catch((e: unknown) => e);
    expect((error as PersysError).code).toBe("UNAVAILABLE");
    expect(retries).toHaveLength(2);
    expect(retries[0]!.failure).toMatch(/ECONNREFUSED/);
  });

  it("backs off exponentially with equal jitter, capped", () => {
    const delays = [1, 2, 3, 4, 5].map((n) => backoffDelay(n, 500, 4000, () => 0));
    expect(delays).toEqual([250, 500, 1000, 2000, 2000]);
    expect(backoffDelay(2, 500, 4000, () => 1)).toBe(1000);
  });
});
