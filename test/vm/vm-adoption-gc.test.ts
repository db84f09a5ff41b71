/**
 * The VM runtime across agent restarts and next to domains it does not own, on real libvirtd + QEMU
 * (TCG) with the fast guest: an agent killed with SIGKILL and started again adopts its running
 * domain (same QEMU process, not redefined, not rebooted); a hand-made domain with Persys metadata
 * naming the node and no assignment is removed after the grace (its overlay with it, the base image
 * kept), a domain without Persys metadata is left alone; a running VM's usage (vCPU time, memory)
 * is in the node's heartbeat.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { buildDomainXml } from "../../agent/src/runtimes/vm/domain-xml.js";
import { until } from "../agent/support/agent-harness.js";
import {
  consoleCount,
  registerFastGuest,
  startVmHarness,
  startVmProcessHarness,
  type VmHarness,
  type VmProcessHarness,
} from "./support/vm-agent.js";
import {
  defineDomain,
  domainState,
  fastGuest,
  fileStamp,
  removeWorkDir,
  virsh,
  vmWorkDir,
  withBootSlot,
} from "./vm-test-host.js";

let h: VmHarness | VmProcessHarness | undefined;
let work: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await removeWorkDir(work);
  work = undefined;
});

const IDLE = "console=ttyS0 panic=-1 quiet persys.mode=idle";
const idleVm = (wid: string) => ({
  id: wid,
  kind: "WORKLOAD_KIND_VM",
  resources: { cpuMillicores: 1000, memoryMib: 256 },
  vm: { vcpus: 1, memoryMib: 256, imageName: "idle", accelerator: "ACCELERATOR_TCG" },
});
const qemuPid = async (domain: string) => (await readFile(`/run/libvirt/qemu/${domain}.pid`, "utf8")).trim();

describe("VM adoption, orphans and usage (fast guest)", () => {
  it("adopts the running domain after the agent is SIGKILLed and started again: same QEMU, no redefine, no reboot", {
    timeout: 360_000,
  }, async () => {
    const ph = await startVmProcessHarness();
    h = ph;
    await registerFastGuest(ph.storageDir, "idle", IDLE);
    const first = await ph.spawn();
    const wid = `adopt-${ph.id}`;
    await ph.rest("PUT", `/v1/workloads/${wid}`, idleVm(wid));
    const domain = ph.domain(`${wid}-0`);
    await withBootSlot("adopted guest", () =>
      until("guest up", async () => (await consoleCount(ph, wid, "PERSYS-FAST-GUEST-DONE")) === 1, 240_000),
    );
    const before = {
      pid: await qemuPid(domain),
      uuid: (await virsh("domuuid", domain)).trim(),
      id: (await virsh("domid", domain)).trim(),
      xmlWritten: (await stat(join(ph.storageDir, "replicas", domain, "domain.xml"))).mtimeMs,
    };

    await first.kill("SIGKILL");
    expect(await domainState(domain)).toBe("running");
    await until(
      "node NotReady while the agent is dead",
      async () => (await ph.rest("GET", `/v1/nodes/${ph.node}`)).body.node.state === "NODE_STATE_NOT_READY",
      30_000,
    );

    await ph.spawn();
    await until(
      "node Ready again with the replica running",
      async () => {
        const n = await ph.rest("GET", `/v1/nodes/${ph.node}`);
        const r = await ph.replica(wid);
        return n.body.node.state === "NODE_STATE_READY" && r?.state === "REPLICA_STATE_RUNNING";
      },
      60_000,
    );
    // Give a wrong adoption (stop, redefine, start) time to show before looking.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await qemuPid(domain)).toBe(before.pid);
    expect((await virsh("domuuid", domain)).trim()).toBe(before.uuid);
    expect((await virsh("domid", domain)).trim()).toBe(before.id);
    expect((await stat(join(ph.storageDir, "replicas", domain, "domain.xml"))).mtimeMs).toBe(before.xmlWritten);
    expect(await consoleCount(ph, wid, "PERSYS-FAST-GUEST-UP")).toBe(1); // booted once
    expect((await ph.replica(wid)).restartCount ?? 0).toBe(0);

    await ph.rest("DELETE", `/v1/workloads/${wid}`);
    await until("domain undefined", async () => (await domainState(domain)) === undefined, 60_000);
  });

  it("removes an unassigned Persys domain after the grace and keeps its base image; reports the usage of a running VM", {
    timeout: 360_000,
  }, async () => {
    const vh = await startVmHarness();
    h = vh;
    const node = vh.agent.nodeId;
    await registerFastGuest(vh.storageDir, "idle", IDLE);
    const wid = `kept-${vh.id}`;
    await vh.rest("PUT", `/v1/workloads/${wid}`, idleVm(wid));
    await withBootSlot("kept guest", () =>
      until("kept guest up", async () => (await consoleCount(vh, wid, "PERSYS-FAST-GUEST-DONE")) === 1, 240_000),
    );

    // Usage: the heartbeat's replica report and Go usage snapshot carry vCPU time and memory.
    const report = await until(
      "VM usage in the heartbeat",
      () => {
        const r = vh.agent.replicas.heartbeat().reports.find((x) => x.workloadId === wid);
        return r && r.cpuMillicoresUsed > 0 && r.memoryBytesUsed > 0 ? r : undefined;
      },
      30_000,
    );
    expect(report.memoryBytesUsed).toBeLessThanOrEqual(256 * 1024 * 1024 * 1.5); // ~ the guest's RAM, not the host's
    expect(report.runtimeId).toBe((await virsh("domuuid", vh.domain(`${wid}-0`))).trim());
    const usage = vh.agent.replicas.heartbeat().usage.find((u) => u.workloadId === `${wid}-0`);
    expect(usage).toMatchObject({ type: "vm", source: expect.stringMatching(/libvirt/) });
    expect(usage!.memoryBytes).toBeGreaterThan(0);

    // An orphan: Persys metadata naming this node, no desired replica; an overlay on a base image.
    work = await vmWorkDir("orphan-base");
    const base = join(work, "base.qcow2");
    await promisify(execFile)("qemu-img", ["create", "-q", "-f", "qcow2", base, "64M"]);
    const baseStamp = await fileStamp(base);
    const orphan = `ghost-${vh.id}-0.${node}`;
    const orphanDir = join(vh.storageDir, "replicas", orphan);
    await mkdir(orphanDir, { recursive: true });
    await promisify(execFile)("qemu-img", [
      "create",
      "-q",
      "-f",
      "qcow2",
      "-F",
      "qcow2",
      "-b",
      base,
      join(orphanDir, "root.qcow2"),
    ]);
    const guest = await fastGuest();
    const domainOf = (name: string, metadata: boolean) =>
      buildDomainXml({
        name,
        vcpus: 1,
        memoryMiB: 128,
        accel: "tcg",
        boot: { kind: "kernel", kernel: guest.kernel, initrd: guest.initrd, cmdline: IDLE },
        disks: [{ path: join(orphanDir, "root.qcow2"), target: "vda" }],
        console: { logPath: join(orphanDir, `${name}.console.log`) },
        ...(metadata
          ? { metadata: { workload: `ghost-${vh.id}`, replica: `ghost-${vh.id}-0`, revision: "r1", node } }
          : {}),
      });
    await defineDomain(orphanDir, domainOf(orphan, true));
    await virsh("start", orphan);
    // Same node suffix but no Persys metadata: not ours, never touched.
    const foreign = `foreign-${vh.id}.${node}`;
    const foreignDir = await vmWorkDir("foreign");
    try {
      await defineDomain(foreignDir, domainOf(foreign, false).replace(join(orphanDir, "root.qcow2"), base));
      await until("orphan removed", async () => (await domainState(orphan)) === undefined, 60_000);
      await until(
        "orphan's overlay folder removed",
        async () => !(await stat(orphanDir).catch(() => undefined)),
        30_000,
      );
      expect(await fileStamp(base)).toBe(baseStamp); // the base image is kept, unwritten
      expect(await domainState(foreign)).toBe("shut off");
      expect(await domainState(vh.domain(`${wid}-0`))).toBe("running");
      expect((await vh.replica(wid))?.state).toBe("REPLICA_STATE_RUNNING");
    } finally {
      await virsh("undefine", foreign).catch(() => undefined);
      await removeWorkDir(foreignDir);
    }
  });
});
