import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AcceleratorProbeOptions, probeAccelerator, probeQemuArgs } from "./accelerator-probe.js";

// A stand-in for qemu-system-x86_64: per accelerator it boots (prints the marker, then idles as a
// guest would), hangs (as KVM does under broken nested virtualisation) or fails at once.
type Behaviour = "boot" | "hang" | "fail";
function fakeQemu(kvm: Behaviour, tcg: Behaviour, version = "9.9.9"): string {
  const act = (behaviour: Behaviour) =>
    ({
      boot: 'echo "[    0.000000] Linux version 6.1"; echo "PERSYS-FAST-GUEST-UP kernel=6.1"; exec sleep 30',
      hang: 'echo "[    0.000000] Linux version 6.1"; exec sleep 30',
      fail: 'echo "qemu-system-x86_64: Could not access KVM kernel module: Permission denied" >&2; exit 1',
    })[behaviour];
  return `#!/bin/sh
if [ "$1" = "--version" ]; then echo "QEMU emulator version ${version} (fake)"; exit 0; fi
case " $* " in
  *" -accel kvm "*) ${act(kvm)} ;;
  *) ${act(tcg)} ;;
esac
`;
}

let dir: string;
let kernel: string;
let initrd: string;
let kvmDevice: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "persys-probe-"));
  kernel = join(dir, "vmlinuz");
  initrd = join(dir, "initramfs.cpio.gz");
  kvmDevice = join(dir, "kvm");
  await writeFile(kernel, "kernel");
  await writeFile(initrd, "initrd");
  await writeFile(kvmDevice, "", { mode: 0o666 });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function options(name: string, script: string, extra: Partial<AcceleratorProbeOptions> = {}) {
  const qemu = join(dir, `qemu-${name}`);
  await writeFile(qemu, script, { mode: 0o755 });
  return {
    guest: { kernel, initrd },
    stateDir: join(dir, `state-${name}`),
    qemu,
    kvmDevice,
    kvmTimeoutMs: 1_000,
    tcgTimeoutMs: 5_000,
    ...extra,
  } satisfies AcceleratorProbeOptions;
}

describe("probeAccelerator", () => {
  it("reports kvm=false when the KVM guest hangs, and falls back to TCG", async () => {
    const result = await probeAccelerator(await options("hang", fakeQemu("hang", "boot")));
    expect(result.kvm).toBe(false);
    expect(result.reason).toBe("guest did not reach init within 1 s under KVM");
    expect(result.tcgWorks).toBe(true);
    expect(result.bootMs).toBe(result.attempts[1]?.ms);
    expect(result.attempts.map((a) => [a.accel, a.ok])).toEqual([
      ["kvm", false],
      ["tcg", true],
    ]);
    expect(result.attempts[0]?.consoleTail).toContain("Linux version");
    expect(result.cached).toBe(false);
  });

  it("reports kvm=true with the KVM boot time when the KVM guest boots", async () => {
    const result = await probeAccelerator(await options("boot", fakeQemu("boot", "boot")));
    expect(result.kvm).toBe(true);
    expect(result.reason).toMatch(/^a guest booted to init in \d+ ms under KVM$/);
    expect(result.tcgWorks).toBe(true);
    expect(result.bootMs).toBe(result.attempts[0]?.ms);
  });

  it("does not try KVM without an accessible /dev/kvm", async () => {
    const result = await probeAccelerator(
      await options("nodev", fakeQemu("boot", "boot"), { kvmDevice: join(dir, "no-such-kvm") }),
    );
    expect(result.kvm).toBe(false);
    expect(result.reason).toMatch(/no-such-kvm is missing or not accessible/);
    expect(result.attempts.map((a) => a.accel)).toEqual(["tcg"]);
  });

  it("explains a QEMU that exits at once with its own words", async () => {
    const result = await probeAccelerator(await options("fail", fakeQemu("fail", "boot")));
    expect(result.kvm).toBe(false);
    expect(result.reason).toMatch(/qemu exited with 1 before the guest reached init under KVM: .*Could not access KVM/);
  });

  it("reports neither accelerator when TCG fails too", async () => {
    const result = await probeAccelerator(await options("none", fakeQemu("hang", "hang"), { tcgTimeoutMs: 1_000 }));
    expect(result).toMatchObject({ kvm: false, tcgWorks: false, bootMs: null });
  });

  it("caches the result per host boot, kernel and QEMU version", async () => {
    const first = await probeAccelerator(await options("cache", fakeQemu("hang", "boot")));
    const file = JSON.parse(await readFile(join(dir, "state-cache", "accelerator-probe.json"), "utf8"));
    expect(file.key).toEqual(first.key);
    expect(first.key.qemuVersion).toBe("QEMU emulator version 9.9.9 (fake)");
    expect(first.key.bootId).toMatch(/\S/);

    // Same key: no QEMU run (this QEMU would fail both boots), the old result comes back marked cached.
    const again = await probeAccelerator(await options("cache", fakeQemu("fail", "fail")));
    expect(again).toMatchObject({ kvm: false, tcgWorks: true, cached: true, probedAt: first.probedAt });

    // refresh forces a probe; a new QEMU version invalidates the cache.
    const refreshed = await probeAccelerator(await options("cache", fakeQemu("fail", "fail"), { refresh: true }));
    expect(refreshed).toMatchObject({ tcgWorks: false, cached: false });
    const upgraded = await probeAccelerator(await options("cache", fakeQemu("boot", "boot", "10.0.0")));
    expect(upgraded).toMatchObject({ kvm: true, cached: false });
  });

  it("says what to install when QEMU is missing, without caching that", async () => {
    const result = await probeAccelerator({
      guest: { kernel, initrd },
      stateDir: join(dir, "state-noqemu"),
      qemu: join(dir, "absent-qemu"),
    });
    expect(result).toMatchObject({ kvm: false, tcgWorks: false, bootMs: null });
    expect(result.reason).toMatch(/not installed.*qemu-system-x86/);
  });

  it("fails with RUNTIME_UNAVAILABLE when the probe guest is missing", async () => {
    const error = await probeAccelerator({ guest: { kernel: join(dir, "nope"), initrd }, stateDir: dir }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("RUNTIME_UNAVAILABLE");
    expect((error as PersysError).message).toMatch(/guest.kernel .*nope is not a file/);
  });
});

describe("probeQemuArgs", () => {
  it("boots the kernel directly with the serial console on stdout and no devices", () => {
    const kvm = probeQemuArgs("kvm", { kernel: "/k", initrd: "/i" });
    expect(kvm.slice(0, 4)).toEqual(["-accel", "kvm", "-cpu", "host"]);
    expect(kvm).toEqual(expect.arrayContaining(["-nodefaults", "-no-reboot", "-serial", "stdio", "-kernel", "/k"]));
    expect(kvm.at(-1)).toContain("persys.mode=probe");
    expect(probeQemuArgs("tcg", { kernel: "/k", initrd: "/i" }).slice(0, 3)).toEqual(["-accel", "tcg", "-machine"]);
  });
});
