import { describe, expect, it } from "vitest";
import { type RestartInput, restartDecision } from "./restart-policy.js";

const base: RestartInput = {
  mode: "on-failure",
  maxRetries: 0,
  exitCode: 137,
  oomKilled: false,
  restarts: 0,
  ranForMs: 500,
  previousDelayMs: 0,
};

describe("restartDecision", () => {
  it.each<{ name: string; input: Partial<RestartInput>; want: { restart: boolean; delayMs: number } }>([
    {
      name: "on-failure restarts a killed container at once-ish (100 ms)",
      input: {},
      want: { restart: true, delayMs: 100 },
    },
    { name: "on-failure leaves a clean exit", input: { exitCode: 0 }, want: { restart: false, delayMs: 0 } },
    {
      name: "on-failure restarts after an OOM kill",
      input: { exitCode: 0, oomKilled: true },
      want: { restart: true, delayMs: 100 },
    },
    {
      name: "on-failure stops at max retries",
      input: { maxRetries: 3, restarts: 3 },
      want: { restart: false, delayMs: 0 },
    },
    {
      name: "on-failure below max retries",
      input: { maxRetries: 3, restarts: 2, previousDelayMs: 100 },
      want: { restart: true, delayMs: 200 },
    },
    {
      name: "always restarts a clean exit",
      input: { mode: "always", exitCode: 0 },
      want: { restart: true, delayMs: 100 },
    },
    { name: "unless-stopped restarts", input: { mode: "unless-stopped" }, want: { restart: true, delayMs: 100 } },
    { name: "no never restarts", input: { mode: "no" }, want: { restart: false, delayMs: 0 } },
    { name: "backoff doubles", input: { previousDelayMs: 800 }, want: { restart: true, delayMs: 1600 } },
    {
      name: "backoff is capped at a minute",
      input: { previousDelayMs: 50_000 },
      want: { restart: true, delayMs: 60_000 },
    },
    {
      name: "backoff resets after 10 s of running",
      input: { previousDelayMs: 6_400, ranForMs: 12_000 },
      want: { restart: true, delayMs: 100 },
    },
  ])("$name", ({ input, want }) => {
    expect(restartDecision({ ...base, ...input })).toEqual(want);
  });
});
