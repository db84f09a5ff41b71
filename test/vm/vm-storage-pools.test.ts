/**
 * VM disks as libvirt storage volumes, on real libvirtd + QEMU (TCG) with the fast guest and a small
 * qcow2 base disk: the agent defines its two dir pools, imports the base image once into the base
 * pool (two workloads on the same image share one base volume), creates each replica's boot overlay
 * (backed by that volume) and data disk as volumes of the disks pool, and on delete removes those
 * volumes with vol-delete while the base volume and the source image stay as they were.
 */
import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import { registerFastGuest, startVmHarness, testPools, type VmHarness } from "./support/vm-agent.js";
import { domainState, virsh, withBootSlot } from "./vm-test-host.js";

let h: VmHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Volume names of a pool (`virsh vol-list`). */
async function volumes(pool: string): Promise<string[]> {
  return (await virsh("vol-list", pool))
    .split("\n")
    .slice(2)
    .map((l) => l.trim().split(/\s+/)[0] ?? "")
    .filter(Boolean);
}

const workload = (id: string, desiredState: string) => ({
  id,
  kind: "WORKLOAD_KIND_VM",
  desiredState,
  resources: { cpuMillicores: 200, memoryMib: 256 },
  vm: {
    vcpus: 1,
    memoryMib: 256,
    imageName: "pooled",
    accelerator: "ACCELERATOR_TCG",
    disks: [{ name: "data", sizeGib: 1 }],
  },
});

describe("VM disks in libvirt storage pools (fast guest)", () => {
  it("imports the base once, makes overlays and data disks as volumes, and deletes them (base kept)", {
    timeout: 420_000,
  }, async () => {
    // Two 1-vCPU VMs reserve 1000m each; a 2-core machine has only 1900m allocatable by default.
    h = await startVmHarness({ "resources-capacity-cpu-millicores": "4000" });
    const pools = testPools(h.agent.nodeId);
    const image = await registerFastGuest(h.storageDir, "pooled", "console=ttyS0 panic=-1 quiet persys.mode=idle");
    const source = join(image, "disk.qcow2");
    await promisify(execFile)("qemu-img", ["create", "-q", "-f", "qcow2", source, "64M"]);
    const sourceBefore = await stat(source);

    const a = `pool-a-${h.id}`;
    const b = `pool-b-${h.id}`;
    expect((await h.rest("PUT", `/v1/workloads/${a}`, workload(a, "DESIRED_STATE_RUNNING"))).status).toBe(201);
    const domainA = h.domain(`${a}-0`);
    const domainB = h.domain(`${b}-0`);

    await withBootSlot("storage pools", async () => {
      await until("replica a running", async () => (await h!.replica(a))?.state === "REPLICA_STATE_RUNNING", 240_000);
    });
    // The pools exist, are active and autostart.
    for (const pool of [pools.base, pools.disks]) {
      const info = await virsh("pool-info", pool);
      expect(info).toMatch(/State:\s+running/);
      expect(info).toMatch(/Autostart:\s+yes/);
    }
    const bases = await volumes(pools.base);
    expect(bases).toHaveLength(1);
    expect(bases[0]).toMatch(/^base-[0-9a-f]{16}\.qcow2$/);
    const basePath = (await virsh("vol-path", "--pool", pools.base, bases[0]!)).trim();
    expect(await volumes(pools.disks)).toEqual(
      expect.arrayContaining([`${domainA}_root.qcow2`, `${domainA}_data.qcow2`]),
    );
    // The running domain uses the volumes; the overlay is backed by the base volume.
    const blk = await virsh("domblklist", domainA);
    const rootPath = (await virsh("vol-path", "--pool", pools.disks, `${domainA}_root.qcow2`)).trim();
    expect(blk).toContain(rootPath);
    const { stdout } = await promisify(execFile)("qemu-img", ["info", "-U", "--output=json", rootPath]);
    expect(JSON.parse(stdout)["backing-filename"]).toBe(basePath);

    // A second workload on the same image (defined, not started): the base is not imported again.
    expect((await h.rest("PUT", `/v1/workloads/${b}`, workload(b, "DESIRED_STATE_STOPPED"))).status).toBe(201);
    let last: unknown;
    await until(
      "replica b stopped",
      async () => {
        const r = await h!.replica(b);
        last = r;
        return r?.state === "REPLICA_STATE_STOPPED";
      },
      120_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(last)}`);
    });
    expect(await volumes(pools.disks)).toEqual(
      expect.arrayContaining([`${domainB}_root.qcow2`, `${domainB}_data.qcow2`]),
    );
    expect(await volumes(pools.base)).toEqual(bases);

    // Delete: every replica volume goes; the base volume and the source image stay.
    await h.rest("DELETE", `/v1/workloads/${a}`);
    await h.rest("DELETE", `/v1/workloads/${b}`);
    await until(
      "domains undefined",
      async () => (await domainState(domainA)) === undefined && (await domainState(domainB)) === undefined,
      120_000,
    );
    await until("replica volumes deleted", async () => (await volumes(pools.disks)).length === 0, 30_000);
    expect(await volumes(pools.base)).toEqual(bases);
    const sourceAfter = await stat(source);
    expect(sourceAfter.mtimeMs).toBe(sourceBefore.mtimeMs);
    expect(sourceAfter.size).toBe(sourceBefore.size);
  });
});
