/**
 * A real Debian guest with real cloud-init as a VM workload through the API (TCG): its boot disk
 * is a qcow2 overlay on the fixture's base image; cloud-init runs the user-data (a console marker
 * and a file on disk); the VM is stopped (ACPI) and started again with the same disk (the file is
 * still there); delete removes the overlay and keeps the base image.
 */
import { access, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import { apiLogLines, startVmHarness, testPools, type VmHarness } from "./support/vm-agent.js";
import { domainState, realGuest, testNetwork, virsh, withBootSlot } from "./vm-test-host.js";

let h: VmHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );
const BOOT_MS = 420_000; // a loaded TCG boot of the Debian guest takes minutes (docs/vm.md)

describe("a real Debian + cloud-init VM workload through the API", () => {
  it("runs its user-data, keeps its disk across stop/start, and delete keeps the base image", {
    timeout: 3 * BOOT_MS + 120_000,
  }, async () => {
    // 2 vCPUs reserve 2000 m (the scheduler counts a VM's vCPUs); CI machines have 2 cores.
    h = await startVmHarness({ "resources-allocatable-cpu-millicores": "4000" });
    const guest = await realGuest();
    const baseBefore = await stat(guest.base!);
    const wid = `real-${h.id}`;
    const marker = "/var/lib/persys-test/marker";
    const userData = [
      "#cloud-config",
      "bootcmd:",
      `  - [sh, -c, 'if [ -f ${marker} ]; then echo "PERSYS-MARKER-FILE $(cat ${marker})" >/dev/ttyS0; fi']`,
      "runcmd:",
      `  - [sh, -c, 'mkdir -p /var/lib/persys-test && echo ${wid} >${marker} && sync && echo "PERSYS-CLOUD-INIT-DONE ${wid}" >/dev/ttyS0']`,
      "",
    ].join("\n");
    const put = await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_VM",
      resources: { cpuMillicores: 1000, memoryMib: 1024 },
      vm: {
        vcpus: 2,
        memoryMib: 1024,
        imagePath: guest.dir,
        accelerator: "ACCELERATOR_TCG",
        cloudInit: { userData },
        networks: [{ network: testNetwork() }],
      },
    });
    expect(put.status).toBe(201);
    const domain = h.domain(`${wid}-0`);
    const overlay = join(h.storageDir, "pools", "disks", `${domain}_root.qcow2`); // a volume of the disks pool

    await withBootSlot("real guest workload, first boot", () =>
      until(
        "cloud-init ran the user-data (console through the API)",
        async () => (await apiLogLines(h!, wid)).some((l) => l.includes(`PERSYS-CLOUD-INIT-DONE ${wid}`)),
        BOOT_MS,
      ),
    );
    expect(await exists(overlay)).toBe(true);

    await h.rest("POST", `/v1/workloads/${wid}/stop`, {});
    await until("replica stopped", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_STOPPED", 180_000);
    expect(await domainState(domain)).toBe("shut off");

    await h.rest("POST", `/v1/workloads/${wid}/start`, {});
    await withBootSlot("real guest workload, second boot", () =>
      until(
        "second boot finds the file the first boot wrote (same disk)",
        async () => (await apiLogLines(h!, wid)).some((l) => l.includes(`PERSYS-MARKER-FILE ${wid}`)),
        BOOT_MS,
      ),
    );

    await h.rest("DELETE", `/v1/workloads/${wid}`);
    await until("domain undefined", async () => (await domainState(domain)) === undefined, 180_000);
    await until("overlay removed", async () => !(await exists(overlay)), 30_000);
    // The base was imported once into the base pool and stays there.
    expect(await virsh("vol-list", testPools(h.agent.nodeId).base)).toMatch(/base-[0-9a-f]{16}\.qcow2/);
    const baseAfter = await stat(guest.base!);
    expect(baseAfter.size).toBe(baseBefore.size);
    expect(baseAfter.mtimeMs).toBe(baseBefore.mtimeMs);
  });
});
