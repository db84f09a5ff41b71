/**
 * Whether KVM really boots a guest on this node, proven by booting one — not by `/dev/kvm` existing.
 * Nested virtualisation can offer `/dev/kvm` (and libvirt domain type kvm) while guests hang right
 * after the kernel is loaded; the node must then report no `kvm` capability and run VMs under TCG.
 *
 * ```ts
 * const probe = await probeAccelerator({
 *   guest: { kernel: "/var/cache/persys/vm/fast-guest/vmlinuz", initrd: ".../initramfs.cpio.gz" },
 *   stateDir: "/var/lib/persys/agent",
 * });
 * // { kvm: false, reason: "guest did not reach init within 20 s under KVM ...", tcgWorks: true, bootMs: 5480, ... }
 * ```
 *
 * The probe boots the fast guest (a kernel plus an initramfs whose /init prints a marker on ttyS0)
 * with `qemu-system-x86_64 -accel kvm`, then with `-accel tcg`, each with a deadline, and kills QEMU
 * as soon as the marker shows. The result is cached in `<stateDir>/accelerator-probe.json`, keyed by
 * the host boot id, the host kernel release and the QEMU version: it is probed again after a reboot
 * or an upgrade of either, never on an agent restart.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { release } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { findHostTool, type HostTool, lastLines, runHostTool } from "./host-tool.js";

/** The guest the probe boots. */
export interface ProbeGuest {
  readonly kernel: string;
  readonly initrd: string;
  /** Default `console=ttyS0 panic=-1 quiet persys.mode=probe` (the fast guest powers off at once). */
  readonly cmdline?: string;
  /** The line start that proves /init runs. Default `PERSYS-FAST-GUEST-UP`. */
  readonly marker?: string;
}

export interface AcceleratorProbeOptions {
  readonly guest: ProbeGuest;
  /** Where the cached result lives (the agent's state folder). */
  readonly stateDir: string;
  /** Default: qemu-system-x86_64 on PATH. */
  readonly qemu?: string;
  /** Default 20 s: a KVM guest is at /init in well under a second; a hung one never gets there. */
  readonly kvmTimeoutMs?: number;
  /** Default 90 s: TCG reaches /init in ~5.5 s on an idle core; shared, loaded CI cores are slower. */
  readonly tcgTimeoutMs?: number;
  /** Default /dev/kvm. */
  readonly kvmDevice?: string;
  /** Probe even when a cached result for this boot exists. */
  readonly refresh?: boolean;
}

/** One boot attempt. */
export interface ProbeAttempt {
  readonly accel: "kvm" | "tcg";
  readonly ok: boolean;
  /** Time from starting QEMU to the marker (ok) or to giving up. */
  readonly ms: number;
  /** Why it failed, in words a person can act on; empty when ok. */
  readonly reason: string;
  /** The last console and stderr lines, for the failure explanation. */
  readonly consoleTail: string;
}

export interface AcceleratorProbeResult {
  /** KVM booted the guest to /init: the node may advertise capability `kvm`. */
  readonly kvm: boolean;
  /** Why KVM is or is not usable. */
  readonly reason: string;
  /** TCG booted the guest to /init: VMs can run here, slowly, without KVM. */
  readonly tcgWorks: boolean;
  /** Boot time to the marker under the accelerator VMs will use (KVM if it works, else TCG); null if neither. */
  readonly bootMs: number | null;
  readonly attempts: readonly ProbeAttempt[];
  /** When the probe ran (ISO 8601); a cached result keeps its time. */
  readonly probedAt: string;
  /** Whether this result came from the cache file. */
  readonly cached: boolean;
  readonly key: ProbeKey;
}

/** What the cached result is valid for. */
export interface ProbeKey {
  readonly bootId: string;
  readonly hostKernel: string;
  readonly qemuVersion: string;
}

const cacheFileName = "accelerator-probe.json";
const defaultMarker = "PERSYS-FAST-GUEST-UP";
const defaultCmdline = "console=ttyS0 panic=-1 quiet persys.mode=probe";

/**
 * Probes KVM and TCG (or returns the cached result for this host boot). Never throws for a failed
 * boot: a node without a working accelerator gets a result saying so; only an unwritable state
 * folder or a missing guest fixture throws.
 */
export async function probeAccelerator(options: AcceleratorProbeOptions): Promise<AcceleratorProbeResult> {
  await assertReadable(options.guest.kernel, "guest.kernel");
  await assertReadable(options.guest.initrd, "guest.initrd");
  let qemu: HostTool;
  try {
    qemu = await findHostTool([options.qemu ?? "qemu-system-x86_64"], "qemu-system-x86");
  } catch (error) {
    // Not cached: installing QEMU should take effect without a reboot.
    return {
      kvm: false,
      reason: (error as Error).message,
      tcgWorks: false,
      bootMs: null,
      attempts: [],
      probedAt: new Date().toISOString(),
      cached: false,
      key: { bootId: await bootId(), hostKernel: release(), qemuVersion: "none" },
    };
  }
  const key: ProbeKey = { bootId: await bootId(), hostKernel: release(), qemuVersion: await qemuVersion(qemu) };
  const cacheFile = join(options.stateDir, cacheFileName);
  if (!options.refresh) {
    const cached = await readCached(cacheFile, key);
    if (cached) return cached;
  }

  const attempts: ProbeAttempt[] = [];
  const kvmDevice = options.kvmDevice ?? "/dev/kvm";
  let kvmReason: string;
  if (!(await canOpen(kvmDevice))) {
    kvmReason = `${kvmDevice} is missing or not accessible: the CPU or the hypervisor offers no KVM here`;
  } else {
    const kvm = await bootOnce(qemu, "kvm", options.guest, options.kvmTimeoutMs ?? 20_000);
    attempts.push(kvm);
    kvmReason = kvm.ok ? `a guest booted to init in ${kvm.ms} ms under KVM` : kvm.reason;
  }
  const tcg = await bootOnce(qemu, "tcg", options.guest, options.tcgTimeoutMs ?? 90_000);
  attempts.push(tcg);
  const kvmAttempt = attempts.find((attempt) => attempt.accel === "kvm");
  const kvm = kvmAttempt?.ok === true;
  const result: AcceleratorProbeResult = {
    kvm,
    reason: kvmReason,
    tcgWorks: tcg.ok,
    bootMs: kvm ? (kvmAttempt?.ms ?? null) : tcg.ok ? tcg.ms : null,
    attempts,
    probedAt: new Date().toISOString(),
    cached: false,
    key,
  };
  await mkdir(options.stateDir, { recursive: true });
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(result, null, 2)}\n`);
  await rename(temporary, cacheFile);
  return result;
}

/** The qemu-system-x86_64 arguments of one probe boot (exported for tests). */
export function probeQemuArgs(accel: "kvm" | "tcg", guest: ProbeGuest): string[] {
  return [
    "-accel",
    accel,
    ...(accel === "kvm" ? ["-cpu", "host"] : []),
    "-machine",
    "q35",
    "-m",
    "256",
    "-smp",
    "1",
    "-nodefaults",
    "-no-user-config",
    "-display",
    "none",
    "-no-reboot",
    "-serial",
    "stdio",
    "-kernel",
    guest.kernel,
    "-initrd",
    guest.initrd,
    "-append",
    guest.cmdline ?? defaultCmdline,
  ];
}

function bootOnce(qemu: HostTool, accel: "kvm" | "tcg", guest: ProbeGuest, timeoutMs: number): Promise<ProbeAttempt> {
  const marker = guest.marker ?? defaultMarker;
  const label = accel === "kvm" ? "KVM" : "TCG";
  const started = performance.now();
  return new Promise((resolve) => {
    let output = "";
    let settled = false;
    const child: ChildProcess = spawn(qemu.path, probeQemuArgs(accel, guest), { stdio: ["ignore", "pipe", "pipe"] });
    const finish = (ok: boolean, reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      resolve({ accel, ok, ms: Math.round(performance.now() - started), reason, consoleTail: lastLines(output, 6) });
    };
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-64 * 1024);
      if (output.split(/\r?\n/).some((line) => line.startsWith(marker))) finish(true, "");
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const timer = setTimeout(() => {
      finish(false, `guest did not reach init within ${Math.round(timeoutMs / 1000)} s under ${label}`);
    }, timeoutMs);
    child.on("error", (error) => finish(false, `${qemu.name} could not start: ${error.message}`));
    child.on("close", (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
      finish(false, `qemu ${how} before the guest reached init under ${label}: ${lastLines(output, 3)}`);
    });
  });
}

async function readCached(file: string, key: ProbeKey): Promise<AcceleratorProbeResult | undefined> {
  let parsed: AcceleratorProbeResult;
  try {
    parsed = JSON.parse(await readFile(file, "utf8")) as AcceleratorProbeResult;
  } catch {
    return undefined;
  }
  const same =
    parsed.key?.bootId === key.bootId &&
    parsed.key?.hostKernel === key.hostKernel &&
    parsed.key?.qemuVersion === key.qemuVersion &&
    typeof parsed.kvm === "boolean" &&
    typeof parsed.tcgWorks === "boolean";
  return same ? { ...parsed, cached: true } : undefined;
}

/** The host's boot id: changes at every boot, so a cached probe never outlives a reboot. */
async function bootId(): Promise<string> {
  try {
    return (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
  } catch {
    return "unknown";
  }
}

async function qemuVersion(qemu: HostTool): Promise<string> {
  try {
    const { stdout } = await runHostTool(qemu, ["--version"], { timeoutMs: 10_000 });
    return stdout.split("\n")[0]?.trim() || "unknown";
  } catch {
    return "unknown";
  }
}

async function canOpen(device: string): Promise<boolean> {
  try {
    await access(device, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

async function assertReadable(path: string, field: string): Promise<void> {
  try {
    if ((await stat(path)).isFile()) return;
  } catch {
    // reported below
  }
  throw new PersysError(
    "RUNTIME_UNAVAILABLE",
    `the accelerator probe guest is missing: ${field} ${path} is not a file`,
    {
      retryable: false,
    },
  );
}
