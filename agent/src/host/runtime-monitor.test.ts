import { describe, expect, it } from "vitest";
import { evaluateRuntime } from "./runtime-monitor.js";

const MiB = 1_048_576;

describe("evaluateRuntime (node condition RuntimeReady)", () => {
  it.each([
    {
      name: "Docker answers, disks have room",
      probe: {
        dockerEnabled: true,
        disks: [{ path: "/var/lib/persys", freeBytes: 10_000 * MiB }],
        minFreeBytes: 512 * MiB,
      },
      want: { ready: true, reason: "DockerReady" },
    },
    {
      name: "Docker does not answer",
      probe: { dockerEnabled: true, dockerError: "connect ENOENT /var/run/docker.sock", disks: [], minFreeBytes: 0 },
      want: { ready: false, reason: "DockerUnavailable", message: "connect ENOENT /var/run/docker.sock" },
    },
    {
      name: "a disk is almost full",
      probe: {
        dockerEnabled: true,
        disks: [
          { path: "/var/lib/persys", freeBytes: 10_000 * MiB },
          { path: "/var/lib/docker", freeBytes: 100 * MiB },
        ],
        minFreeBytes: 512 * MiB,
      },
      want: {
        ready: false,
        reason: "DiskFull",
        message: "disk almost full: /var/lib/docker has 100 MiB free (need 512 MiB)",
      },
    },
    {
      name: "Docker disabled",
      probe: { dockerEnabled: false, disks: [], minFreeBytes: 0 },
      want: { ready: false, reason: "DockerDisabled" },
    },
  ])("$name", ({ probe, want }) => {
    expect(evaluateRuntime(probe)).toMatchObject(want);
  });
});
