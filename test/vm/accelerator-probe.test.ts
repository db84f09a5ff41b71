/**
 * The accelerator probe on this machine with the real fast guest and QEMU: TCG must boot it; KVM is
 * whatever this host really does (on the CI machine kind /dev/kvm exists but guests hang, so the
 * expected answer is kvm=false with a reason, and the test prints it).
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeAccelerator } from "../../agent/src/runtimes/vm/accelerator-probe.js";
import { fastGuest, withBootSlot } from "./vm-test-host.js";

let stateDir: string;
beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "persys-probe-state-"));
});
afterAll(() => rm(stateDir, { recursive: true, force: true }));

describe("accelerator probe on this host", () => {
  it("boots the fast guest under TCG, tells whether KVM works, and caches the answer", {
    timeout: 900_000,
  }, async () => {
    const guest = await fastGuest();
    const result = await withBootSlot("accelerator-probe", () =>
      probeAccelerator({ guest: { kernel: guest.kernel, initrd: guest.initrd }, stateDir, refresh: true }),
    );
    console.log(
      `[accelerator-probe] kvm=${result.kvm} (${result.reason}); tcgWorks=${result.tcgWorks}; bootMs=${result.bootMs}; ` +
        `attempts=${result.attempts.map((a) => `${a.accel}:${a.ok ? "ok" : "failed"}:${a.ms}ms`).join(",")}`,
    );
    expect(result.tcgWorks, `TCG did not boot the fast guest: ${JSON.stringify(result.attempts)}`).toBe(true);
    expect(result.bootMs).toBeGreaterThan(0);
    if (!result.kvm) {
      expect(result.reason).toMatch(/KVM|kvm/);
      if (existsSync("/dev/kvm")) expect(result.attempts[0]?.accel).toBe("kvm");
    }

    const started = performance.now();
    const again = await probeAccelerator({ guest: { kernel: guest.kernel, initrd: guest.initrd }, stateDir });
    expect(again.cached).toBe(true);
    expect(again.kvm).toBe(result.kvm);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
