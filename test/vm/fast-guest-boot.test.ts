/**
 * The fast guest through libvirt under TCG: the domain XML builder's output is accepted by libvirt,
 * the Persys metadata survives libvirt's re-serialisation, the NoCloud seed built by the agent is
 * visible to the guest byte for byte, the guest gets a DHCP lease on the test network that libvirt
 * reports, and destroy + undefine leave nothing behind.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSeedIso } from "../../agent/src/runtimes/vm/cloud-init-seed.js";
import { buildDomainXml, parseReplicaMetadata } from "../../agent/src/runtimes/vm/domain-xml.js";
import {
  defineDomain,
  domainState,
  fastGuest,
  randomMac,
  removeDomain,
  removeWorkDir,
  saveConsole,
  testDomainName,
  testNetwork,
  virsh,
  vmWorkDir,
  waitForConsole,
  withBootSlot,
} from "./vm-test-host.js";

const name = testDomainName("fast");
let dir: string | undefined;

beforeAll(async () => {
  dir = await vmWorkDir("fast");
});

afterAll(async () => {
  await removeDomain(name);
  if (dir) await saveConsole(join(dir, "console.log"), name);
  await removeWorkDir(dir);
});

describe("fast guest under TCG through libvirt", () => {
  it("boots, shows its seed and DHCP lease, and is removed without a trace", { timeout: 900_000 }, async () => {
    const guest = await fastGuest();
    const work = dir!;
    const userData = `#cloud-config\n# quotes ' " & <tags> survive\nruncmd:\n  - [echo, "hello from ${name}"]\n`;
    const seed = await buildSeedIso(
      { instanceId: `${name}-1`, hostname: "fast-guest", userData, metaData: "region: test-1\n" },
      join(work, "seed.iso"),
    );
    expect(seed.tool).toMatch(/genisoimage|mkisofs|xorriso/);

    const mac = randomMac();
    const metadata = { workload: "fast & <small>", replica: `${name}-0`, revision: "rev'1", node: "test-node" };
    const consoleLog = join(work, "console.log");
    const xml = buildDomainXml({
      name,
      vcpus: 1,
      memoryMiB: 256,
      accel: "tcg",
      boot: {
        kind: "kernel",
        kernel: guest.kernel,
        initrd: guest.initrd,
        cmdline: `${guest.cmdline} persys.net=dhcp persys.mode=idle`,
      },
      disks: [],
      seed: { path: seed.path },
      networks: [{ network: testNetwork(), mac }],
      console: { logPath: consoleLog },
      metadata,
    });
    await defineDomain(work, xml);
    expect(parseReplicaMetadata(await virsh("dumpxml", name))).toEqual(metadata);
    expect(await domainState(name)).toBe("shut off");

    const done = await withBootSlot(name, async () => {
      const started = performance.now();
      await virsh("start", name);
      const up = await waitForConsole(consoleLog, /^PERSYS-FAST-GUEST-UP/m, { timeoutMs: 180_000, domain: name });
      const done = await waitForConsole(consoleLog, /^PERSYS-FAST-GUEST-DONE/m, { timeoutMs: 120_000, domain: name });
      console.log(
        `[fast-guest] marker PERSYS-FAST-GUEST-UP ${up.ms} ms after virsh start returned, ` +
          `DONE after ${Math.round(performance.now() - started)} ms (TCG, 1 vCPU)`,
      );
      return done;
    });

    const text = done.text;
    const section = (file: string) =>
      new RegExp(`^PERSYS-SEED-BEGIN ${file}\\n([\\s\\S]*?)\\n^PERSYS-SEED-END ${file}$`, "m").exec(text)?.[1];
    // /init prints the file, then a newline so the end marker starts a line: the capture is the file.
    expect(section("user-data")).toBe(userData);
    const metaData = section("meta-data") ?? "";
    expect(metaData).toContain(`instance-id: ${name}-1`);
    expect(metaData).toContain("local-hostname: fast-guest");
    expect(metaData).toContain("region: test-1");
    expect(text).not.toContain("PERSYS-SEED-MISSING");

    const net = /^PERSYS-NET-UP (\S+) (\d+\.\d+\.\d+\.\d+)\/\d+$/m.exec(text);
    expect(net, `no DHCP lease; console:\n${text}`).not.toBeNull();
    expect(net?.[1]).toBe(mac);
    const addresses = await virsh("domifaddr", name, "--source", "lease");
    expect(addresses).toContain(mac);
    expect(addresses).toContain(net?.[2]);

    expect(await domainState(name)).toBe("running");
    await virsh("destroy", name); // the slot is free again: a destroyed guest costs no CPU
    expect(await domainState(name)).toBe("shut off");
    await virsh("undefine", name);
    expect(await domainState(name)).toBeUndefined();
    expect((await virsh("list", "--all", "--name")).split("\n")).not.toContain(name);
  });
});
