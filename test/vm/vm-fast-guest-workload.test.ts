/**
 * A VM workload end to end through the control plane and a real agent on real libvirtd + QEMU
 * (TCG): the fast guest (host kernel + busybox initramfs) registered by name in the agent's image
 * folder, a cloud-init seed, a NIC on the test network; the console read through the logs API shows
 * the guest's marker and the seed it found; the replica reports its domain, MAC and accelerator;
 * delete removes the domain and the replica's files and keeps the base image.
 */
import { access, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import { apiLogLines, startVmHarness, type VmHarness } from "./support/vm-agent.js";
import { domainState, fastGuest, testNetwork, virsh, withBootSlot } from "./vm-test-host.js";

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

describe("a VM workload (fast guest) through the API", () => {
  it("boots, shows its marker and seed on the console through the logs API, and is deleted cleanly", {
    timeout: 600_000,
  }, async () => {
    h = await startVmHarness();
    // Register the fast guest by name: an image folder (kernel, initramfs, cmdline) in images/.
    const guest = await fastGuest();
    const image = join(h.storageDir, "images", "fast-guest");
    await mkdir(image, { recursive: true });
    await symlink(guest.kernel, join(image, "kernel"));
    await symlink(guest.initrd, join(image, "initramfs.cpio.gz"));
    await writeFile(join(image, "cmdline"), "console=ttyS0 panic=-1 quiet persys.mode=idle persys.net=dhcp\n");

    const wid = `fast-${h.id}`;
    const token = `seed-token-${h.id}`;
    const put = await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_VM",
      resources: { cpuMillicores: 1000, memoryMib: 256 },
      vm: {
        vcpus: 1,
        memoryMib: 256,
        imageName: "fast-guest",
        accelerator: "ACCELERATOR_AUTO",
        cloudInit: { userData: `#cloud-config\n# ${token}\n`, metaData: "persys-test: fast\n" },
        networks: [{ network: testNetwork() }],
      },
    });
    expect(put.status).toBe(201);

    await withBootSlot("fast guest workload", async () => {
      const running = await until(
        "replica running",
        async () => {
          const r = await h!.replica(wid);
          return r?.state === "REPLICA_STATE_RUNNING" ? r : undefined;
        },
        120_000,
      );
      expect(running.nodeId).toBe(h!.agent.nodeId);
      const lines = await until(
        "console shows the marker and the seed through the API",
        async () => {
          const got = await apiLogLines(h!, wid);
          return got.includes("PERSYS-FAST-GUEST-DONE") ? got : undefined;
        },
        240_000,
      );
      expect(
        lines.some((l) => l.startsWith("PERSYS-FAST-GUEST-UP")),
        lines.join("\n"),
      ).toBe(true);
      const seed = lines.slice(
        lines.indexOf("PERSYS-SEED-BEGIN user-data"),
        lines.indexOf("PERSYS-SEED-END user-data"),
      );
      expect(seed).toContain(`# ${token}`);
      const meta = lines.slice(
        lines.indexOf("PERSYS-SEED-BEGIN meta-data"),
        lines.indexOf("PERSYS-SEED-END meta-data"),
      );
      expect(meta.join("\n")).toContain(`instance-id: ${wid}-0-`);
      expect(meta).toContain(`local-hostname: ${wid}-0`);
      expect(meta).toContain("persys-test: fast");
    });

    // The agent reports the domain, its MAC (generated, recorded) and the accelerator it chose.
    const domain = h.domain(`${wid}-0`);
    expect(await domainState(domain)).toBe("running");
    const xml = await virsh("dumpxml", domain);
    const mac = /<mac address='([^']+)'/.exec(xml)?.[1];
    expect(mac).toMatch(/^52:54:00:/);
    expect(xml).toContain("<domain type='qemu'"); // KVM does not boot guests here: TCG
    const status = await h.agent.replicas.status(`${wid}-0`);
    expect(status?.metadata).toMatchObject({ "vm.domain": domain, "vm.nic0.mac": mac, "vm.accel": "tcg" });
    // The guest took a DHCP lease (it prints it); the API reports that address from libvirt's leases.
    const netUp = (await apiLogLines(h, wid)).find((l) => l.startsWith("PERSYS-NET-UP"));
    expect(netUp).toBeDefined();
    const ip = netUp!.split(" ")[2]?.replace(/\/\d+$/, ""); // "PERSYS-NET-UP <mac> <ip>/<prefix>"
    const withIp = await until(
      "the VM address in the replica's endpoints",
      async () => {
        const r = await h!.replica(wid);
        return r?.endpoints?.some((e: any) => e.kind === "ENDPOINT_KIND_VM_ADDRESS" && e.address === ip)
          ? r
          : undefined;
      },
      60_000,
    );
    expect(withIp.endpoints).toContainEqual(expect.objectContaining({ kind: "ENDPOINT_KIND_VM_ADDRESS", address: ip }));

    const replicaDir = join(h.storageDir, "replicas", domain);
    const seedVolume = join(h.storageDir, "pools", "disks", `${domain}_seed.iso`); // a volume of the disks pool
    expect(await exists(seedVolume)).toBe(true);
    const del = await h.rest("DELETE", `/v1/workloads/${wid}`);
    expect(del.status).toBeLessThan(300);
    await until("domain undefined", async () => (await domainState(domain)) === undefined, 120_000);
    await until(
      "replica files removed",
      async () => !(await exists(replicaDir)) && !(await exists(seedVolume)),
      30_000,
    );
    expect(await exists(join(image, "kernel"))).toBe(true); // the base image stays
  });
});
