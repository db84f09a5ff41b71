import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { backoffDelay, cancelledError, isRetryableCallError, retryPolicy, sleep } from "./retry-policy.js";

describe("retry policy", () => {
  it.each([
    { code: "UNAVAILABLE", retry: true },
    { code: "STORAGE_ERROR", retry: true },
    { code: "CONFLICT", retry: true },
    { code: "INVALID_SPEC", retry: false },
    { code: "INVALID_ARGUMENT", retry: false },
    { code: "NOT_FOUND", retry: false },
    { code: "DEADLINE_EXCEEDED", retry: false },
    { code: "CANCELLED", retry: false },
    { code: "PERMISSION_DENIED", retry: false },
  ] as const)("$code retried: $retry", ({ code, retry }) => {
    expect(isRetryableCallError(new PersysError(code, "x"))).toBe(retry);
  });

  it("follows the server's retryable flag over the registry default", () => {
    expect(isRetryableCallError(new PersysError("UNAVAILABLE", "x", { retryable: false }))).toBe(false);
  });

  it("does not retry CONFLICT of a conditional request, nor non-Persys errors", () => {
    expect(isRetryableCallError(new PersysError("CONFLICT", "x"), { conditional: true })).toBe(false);
    expect(isRetryableCallError(new Error("x"))).toBe(false);
  });

  it("grows the delay exponentially with jitter, within the cap", () => {
    const policy = retryPolicy({ initialBackoffMs: 100, maxBackoffMs: 1000 });
    expect([0, 1, 2, 3, 10].map((n) => backoffDelay(policy, n, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([0, 1, 2, 3, 10].map((n) => backoffDelay(policy, n, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  });

  it("false disables retries", () => {
    expect(retryPolicy(false).maxAttempts).toBe(1);
    expect(retryPolicy({ maxAttempts: 0 }).maxAttempts).toBe(1);
  });

  it("sleep rejects with CANCELLED when its signal aborts", async () => {
    const controller = new AbortController();
    const slept = sleep(10_000, controller.signal);
    controller.abort(new Error("user pressed Ctrl-C"));
    await expect(slept).rejects.toMatchObject({ code: "CANCELLED", message: expect.stringContaining("Ctrl-C") });
    expect(cancelledError(controller.signal)).toBeInstanceOf(PersysError);
  });
});
