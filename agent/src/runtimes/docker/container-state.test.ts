import { describe, expect, it } from "vitest";
import type { DesiredState } from "../../replicas/desired-replica.js";
import { type ContainerSnapshot, type ObservedReason, observedStateOf } from "./container-state.js";

const base: ContainerSnapshot = {
  id: "c1",
  name: "web-0",
  labels: {},
  status: "running",
  running: true,
  restarting: false,
  oomKilled: false,
  exitCode: 0,
  error: "",
  health: "none",
  healthOutput: "",
  failingStreak: 0,
  restartCount: 0,
  memoryLimitBytes: 64 * 1_048_576,
  ports: [],
};

const exited = (exitCode: number, extra: Partial<ContainerSnapshot> = {}): ContainerSnapshot => ({
  ...base,
  status: "exited",
  running: false,
  exitCode,
  ...extra,
});

const portConflict: ObservedReason = {
  code: "PORT_CONFLICT",
  message: "host port 8080 is already in use",
  retryable: false,
};

describe("observedStateOf", () => {
  it.each<{ name: string; c: ContainerSnapshot; desired?: DesiredState; startError?: ObservedReason; want: unknown }>([
    { name: "running", c: base, want: { state: "RUNNING" } },
    { name: "running, healthcheck not passed yet", c: { ...base, health: "starting" }, want: { state: "STARTING" } },
    { name: "running and healthy", c: { ...base, health: "healthy" }, want: { state: "RUNNING" } },
    {
      name: "running but unhealthy",
      c: { ...base, health: "unhealthy", failingStreak: 3, healthOutput: "connection refused" },
      want: {
        state: "FAILED",
        reason: {
          code: "UNHEALTHY",
          message: "healthcheck failed 3 times in a row: connection refused",
          retryable: true,
        },
      },
    },
    {
      name: "exited with code 3",
      c: exited(3),
      want: { state: "FAILED", reason: { code: "CONTAINER_EXITED", message: "exited with code 3", retryable: true } },
    },
    {
      name: "OOM killed",
      c: exited(137, { oomKilled: true }),
      want: {
        state: "FAILED",
        reason: { code: "OOM_KILLED", message: "killed for exceeding its memory limit of 64 MiB", retryable: true },
      },
    },
    {
      name: "restarting by Docker's policy",
      c: { ...exited(1), status: "restarting", restarting: true, running: true },
      want: {
        state: "STARTING",
        reason: { code: "CONTAINER_EXITED", message: "exited with code 1; Docker restarts it", retryable: true },
      },
    },
    {
      name: "created after a failed start",
      c: { ...exited(0), status: "created" },
      startError: portConflict,
      want: { state: "FAILED", reason: portConflict },
    },
    { name: "the start error loses once it runs", c: base, startError: portConflict, want: { state: "RUNNING" } },
    {
      name: "stopped by Persys (exit 137) while desired stopped",
      c: exited(137),
      desired: "stopped",
      want: { state: "STOPPED" },
    },
    {
      name: "created, desired stopped",
      c: { ...exited(0), status: "created" },
      desired: "stopped",
      want: { state: "STOPPED" },
    },
    {
      name: "exited 0 while it should run",
      c: exited(0),
      want: { state: "STOPPED", reason: { code: "CONTAINER_EXITED", message: "exited with code 0", retryable: true } },
    },
    {
      name: "dead",
      c: { ...exited(0), status: "dead", error: "driver error" },
      want: {
        state: "FAILED",
        reason: { code: "RUNTIME_ERROR", message: "container is dead: driver error", retryable: true },
      },
    },
    {
      name: "paused outside Persys",
      c: { ...base, status: "paused" },
      want: {
        state: "STOPPED",
        reason: { code: "RUNTIME_ERROR", message: "container is paused outside Persys", retryable: true },
      },
    },
  ])("$name", ({ c, desired, startError, want }) => {
    expect(observedStateOf(c, desired ?? "running", startError)).toEqual(want);
  });
});
