/**
 * Reboot through the API (RestartWorkload with RESTART_MODE_REBOOT) on real libvirtd + QEMU (TCG),
 * with the fast guest: the guest boots a second time (its marker twice on the console read
 * through the logs API) in the same domain, the same QEMU process and with the same disk, the
 * replica reports the reboot's revision and a ReplicaRebooted event records it. A guest that
 * handles ACPI reboots on the request (it prints its power-button line first); one that ignores
 * ACPI (`acpi=off`) is reset after the agent's reboot timeout.
 */
import { PersysClient } from "@persys/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import { apiLogLines, consoleCount, registerFastGuest, startVmHarness, type VmHarness } from "./support/vm-agent.js";
import { domainState, virsh, withBootSlot } from "./vm-test-host.js";

let h: VmHarness | undefined;
let client: PersysClient | undefined;
afterEach(async () => {
  client?.close();
  client = undefined;
  await h?.close();
  h = undefined;
});

const REBOOT_TIMEOUT_SECONDS = 20;

/** The QEMU process of a domain (its pid file under libvirt's run folder). */
async function qemuPid(domain: string): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  return (await readFile(`/run/libvirt/qemu/${domain}.pid`, "utf8")).trim();
}

/** Source paths of a domain's disks (`virsh domblklist`). */
async function diskSources(domain: string): Promise<string[]> {
  return (await virsh("domblklist", domain))
    .split("\n")
    .slice(2)
    .map((l) => l.trim().split(/\s+/)[1] ?? "")
    .filter((p) => p.startsWith("/"));
}

async function rebootCase(name: string, cmdline: string, expectAcpi: boolean): Promise<void> {
  h = await startVmHarness({ "runtimes-vm-reboot-timeout-seconds": String(REBOOT_TIMEOUT_SECONDS) });
  client = new PersysClient({ endpoint: h.grpcAddress });
  await registerFastGuest(h.storageDir, name, cmdline);
  const wid = `${name}-${h.id}`;
  const put = await h.rest("PUT", `/v1/workloads/${wid}`, {
    id: wid,
    kind: "WORKLOAD_KIND_VM",
    resources: { cpuMillicores: 1000, memoryMib: 256 },
    vm: {
      vcpus: 1,
      memoryMib: 256,
      imageName: name,
      accelerator: "ACCELERATOR_TCG",
      disks: [{ name: "data", sizeGib: 1 }],
    },
  });
  expect(put.status).toBe(201);
  const domain = h.domain(`${wid}-0`);

  await withBootSlot(`reboot (${name})`, async () => {
    const first = await until(
      "replica running and the guest up",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_RUNNING" && (await consoleCount(h!, wid, "PERSYS-FAST-GUEST-DONE")) >= 1
          ? r
          : undefined;
      },
      240_000,
    );
    const pid = await qemuPid(domain);
    const disks = await diskSources(domain);
    expect(disks.some((p) => p.endsWith("_data.qcow2"))).toBe(true); // a volume of the disks pool
    const uuid = (await virsh("domuuid", domain)).trim();

    const asked = Date.now();
    await client!.workloads.restart(wid, { reboot: true });
    const rebooted = await until(
      "the guest booted a second time and the replica reports the reboot",
      async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_RUNNING" &&
          r.observedRevision?.endsWith("+b1") &&
          (await consoleCount(h!, wid, "PERSYS-FAST-GUEST-UP")) >= 2
          ? r
          : undefined;
      },
      300_000,
    );
    const tookMs = Date.now() - asked;
    expect(rebooted.observedRevision).toBe(`${first.observedRevision}+b1`);
    // In place: the same domain, QEMU process and disk; the agent did not restart the domain.
    expect(await qemuPid(domain)).toBe(pid);
    expect((await virsh("domuuid", domain)).trim()).toBe(uuid);
    expect(await diskSources(domain)).toEqual(disks);
    expect(rebooted.restartCount).toBe(first.restartCount);
    const lines = await apiLogLines(h!, wid);
    if (expectAcpi) {
      expect(lines).toContain("PERSYS-FAST-GUEST-ACPI-POWEROFF"); // the guest acted on the ACPI request
    } else {
      expect(lines).not.toContain("PERSYS-FAST-GUEST-ACPI-POWEROFF");
      expect(tookMs).toBeGreaterThanOrEqual(REBOOT_TIMEOUT_SECONDS * 1000); // reset after the timeout
    }
    const events = await until(
      "a ReplicaRebooted event",
      async () => {
        const got = (await h!.rest("GET", `/v1/workloads/${wid}/events?types=ReplicaRebooted`)).body.events ?? [];
        return got.length > 0 ? got : undefined;
      },
      30_000,
    );
    expect(events.map((e: any) => e.message)).toEqual(["replica 0 rebooted in place (reboot 1, same runtime object)"]);
  });

  // Reboot of a stopped workload: CONFLICT, nothing happens.
  await h.rest("POST", `/v1/workloads/${wid}/stop`, {});
  const refused = await h.rest("POST", `/v1/workloads/${wid}/restart`, { mode: "RESTART_MODE_REBOOT" });
  expect(refused.status).toBe(409);

  await h.rest("DELETE", `/v1/workloads/${wid}`);
  await until("domain undefined", async () => (await domainState(domain)) === undefined, 120_000);
}

describe("VM reboot through the API (fast guest)", () => {
  it("a guest that handles ACPI reboots in place on the request", { timeout: 600_000 }, async () => {
    await rebootCase("rb-acpi", "console=ttyS0 panic=-1 quiet persys.mode=idle", true);
  });

  it("a guest that ignores ACPI is reset after the reboot timeout", { timeout: 600_000 }, async () => {
    await rebootCase("rb-noacpi", "console=ttyS0 panic=-1 quiet persys.mode=idle acpi=off", false);
  });
});
