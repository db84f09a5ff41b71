/**
 * What a user sees when a VM goes wrong, on real libvirtd + QEMU (TCG) with the fast guest:
 * a guest that powers itself off is reported VM_CRASHED with its console tail and started again by
 * the agent (restart count grows, the console shows a second boot); a VM whose kernel QEMU cannot
 * load fails with VM_BOOT_FAILED carrying QEMU's words; a guest kernel panic is reported through the
 * pvpanic device as VM_CRASHED ("the guest crashed") with the panic on the console tail.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import { consoleCount, registerFastGuest, startVmHarness, type VmHarness } from "./support/vm-agent.js";
import { domainState, withBootSlot } from "./vm-test-host.js";

let h: VmHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const vm = (imageName: string) => ({
  vcpus: 1,
  memoryMib: 256,
  imageName,
  accelerator: "ACCELERATOR_TCG",
});

describe("VM failures (fast guest)", () => {
  it("a guest that powers itself off is VM_CRASHED with the console tail, and is started again", {
    timeout: 420_000,
  }, async () => {
    h = await startVmHarness();
    // Up for 6 s, then `poweroff -f`: longer than the 5 s under which a stop counts as a boot failure.
    await registerFastGuest(h.storageDir, "self-off", "console=ttyS0 panic=-1 quiet persys.uptime=6");
    const wid = `off-${h.id}`;
    const put = await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_VM",
      resources: { cpuMillicores: 1000, memoryMib: 256 },
      vm: vm("self-off"),
    });
    expect(put.status).toBe(201);

    await withBootSlot("self-powering-off guest", async () => {
      const crashed = await until(
        "replica reports VM_CRASHED",
        async () => {
          const r = await h!.replica(wid);
          return r?.reason?.code === "VM_CRASHED" ? r : undefined;
        },
        240_000,
      );
      expect(crashed.state).toBe("REPLICA_STATE_STARTING");
      expect(crashed.reason.message).toContain("the guest powered itself off");
      expect(crashed.reason.message).toContain("PERSYS-FAST-GUEST-DONE"); // the console tail
      expect(crashed.reason.retryable).toBe(true);
      expect(crashed.reason.nextRetryAt).toBeDefined();

      const restarted = await until(
        "the agent started it again (restart count, a second boot on the console)",
        async () => {
          const r = await h!.replica(wid);
          return (r?.restartCount ?? 0) >= 1 && (await consoleCount(h!, wid, "PERSYS-FAST-GUEST-UP")) >= 2
            ? r
            : undefined;
        },
        180_000,
      );
      expect(restarted.restartCount).toBeGreaterThanOrEqual(1);
    });

    const domain = h.domain(`${wid}-0`);
    await h.rest("DELETE", `/v1/workloads/${wid}`);
    await until("domain undefined", async () => (await domainState(domain)) === undefined, 60_000);
  });

  it("a guest kernel panic is VM_CRASHED (pvpanic) with the console tail, not a reboot", {
    timeout: 420_000,
  }, async () => {
    h = await startVmHarness();
    // Up for 6 s after the seed, then a kernel panic (sysrq c); panic=-1 alone would reboot the guest.
    await registerFastGuest(h.storageDir, "panics", "console=ttyS0 panic=-1 quiet persys.mode=idle persys.panic=6");
    const wid = `panic-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_VM",
      resources: { cpuMillicores: 1000, memoryMib: 256 },
      vm: vm("panics"),
    });
    await withBootSlot("panicking guest", async () => {
      const crashed = await until(
        "replica reports VM_CRASHED",
        async () => {
          const r = await h!.replica(wid);
          return r?.reason?.code === "VM_CRASHED" ? r : undefined;
        },
        240_000,
      );
      expect(crashed.state).toBe("REPLICA_STATE_STARTING");
      // libvirt's reason is "crashed" (pvpanic + on_crash=destroy), not a guest reboot.
      expect(crashed.reason.message).toContain("the guest crashed");
      expect(crashed.reason.message).toMatch(/RIP:|Kernel panic|sysrq/); // the kernel's panic on the console tail
      expect(crashed.reason.retryable).toBe(true);
      expect(await consoleCount(h!, wid, "PERSYS-FAST-GUEST-PANIC")).toBeGreaterThanOrEqual(1);
    });
    const domain = h.domain(`${wid}-0`);
    await h.rest("DELETE", `/v1/workloads/${wid}`);
    await until("domain undefined", async () => (await domainState(domain)) === undefined, 120_000);
  });

  it("a VM whose kernel QEMU cannot load fails with VM_BOOT_FAILED and QEMU's words", {
    timeout: 180_000,
  }, async () => {
    h = await startVmHarness();
    const broken = join(h.storageDir, "not-a-kernel");
    await writeFile(broken, Buffer.alloc(64 * 1024, 0x5a)); // 64 KiB of 'Z': no bzImage, no ELF
    await registerFastGuest(h.storageDir, "broken-kernel", "console=ttyS0", { kernel: broken });
    const wid = `noboot-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_VM",
      resources: { cpuMillicores: 1000, memoryMib: 256 },
      vm: vm("broken-kernel"),
    });
    const failed = await until(
      "replica reports VM_BOOT_FAILED",
      async () => {
        const r = await h!.replica(wid);
        return r?.reason?.code === "VM_BOOT_FAILED" ? r : undefined;
      },
      120_000,
    );
    expect(failed.state).toBe("REPLICA_STATE_FAILED");
    expect(failed.reason.message).toContain("did not start");
    expect(failed.reason.message).toMatch(/kernel/i); // QEMU names what it could not load
    expect(await domainState(h.domain(`${wid}-0`))).toBe("shut off");

    await h.rest("DELETE", `/v1/workloads/${wid}`);
    await until("domain undefined", async () => (await domainState(h!.domain(`${wid}-0`))) === undefined, 60_000);
  });
});
