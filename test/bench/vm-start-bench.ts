/**
 * VM start latency of the fast guest (host kernel + busybox initramfs, TCG), Persys end to end vs.
 * QEMU directly, side by side in one run:
 *
 *   npm run bench:vm-start -- [--n 3]
 *
 * - persys: PUT /v1/workloads (a VM workload) on a real control plane with a real agent on the test
 *   libvirtd, until the console read through the logs API shows PERSYS-FAST-GUEST-UP, then delete;
 * - direct: `qemu-system-x86_64 -accel tcg` with the same kernel, initramfs, memory and vCPU count,
 *   serial on stdout, until the same marker.
 * Runs alternate (direct, persys, ...) so both see the same load, and direct QEMU runs at the
 * priority of libvirt's QEMU (libvirtd's nice value), so a bench run under `nice` compares like with
 * like. Prints one JSON object {persysBootToMarkerMs, directQemuBootToMarkerMs, ratio, runs,
 * loadAverage, qemuNice} (medians).
 * Needs what the VM suites need: PERSYS_LIBVIRT_URI, PERSYS_LIBVIRT_NETWORK, PERSYS_TEST_VM_FAST_GUEST
 * (scripts/lib/libvirt.sh: persys_setup_libvirt), etcd/Redis/Docker as for the other suites.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { getPriority, loadavg, setPriority } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { probeQemuArgs } from "../../agent/src/runtimes/vm/accelerator-probe.js";
import { until } from "../agent/support/agent-harness.js";
import { apiLogLines, startVmHarness } from "../vm/support/vm-agent.js";
import { fastGuest } from "../vm/vm-test-host.js";

const { values: flags } = parseArgs({ options: { n: { type: "string", default: "3" } } });
const runs = Number(flags.n);
const MARKER = "PERSYS-FAST-GUEST-UP";
const CMDLINE = "console=ttyS0 panic=-1 quiet persys.mode=idle";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/**
 * The scheduling priority libvirt's QEMU runs at (libvirtd's, which QEMU inherits): direct QEMU gets
 * the same, so running the bench under `nice` does not slow one side only.
 */
async function libvirtQemuPriority(): Promise<number> {
  try {
    return getPriority(Number((await readFile("/run/libvirtd.pid", "utf8")).trim()));
  } catch {
    return 0;
  }
}

async function direct(kernel: string, initrd: string, priority: number): Promise<number> {
  const started = performance.now();
  const child = spawn("qemu-system-x86_64", probeQemuArgs("tcg", { kernel, initrd, cmdline: CMDLINE }), {
    stdio: ["ignore", "pipe", "ignore"],
  });
  if (child.pid) setPriority(child.pid, priority);
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("direct QEMU: no marker within 120 s"));
    }, 120_000);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(MARKER)) {
        clearTimeout(timer);
        const ms = performance.now() - started;
        child.kill("SIGKILL");
        resolve(ms);
      }
    });
  });
}

const guest = await fastGuest();
const priority = await libvirtQemuPriority();
const h = await startVmHarness();
try {
  const image = join(h.storageDir, "images", "fast-guest");
  await mkdir(image, { recursive: true });
  await symlink(guest.kernel, join(image, "kernel"));
  await symlink(guest.initrd, join(image, "initramfs.cpio.gz"));
  await writeFile(join(image, "cmdline"), `${CMDLINE}\n`);
  const persysMs: number[] = [];
  const directMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    directMs.push(await direct(guest.kernel, guest.initrd, priority));
    const wid = `bench-${h.id}-${i}`;
    const started = performance.now();
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_VM",
      resources: { cpuMillicores: 1000, memoryMib: 256 },
      vm: { vcpus: 1, memoryMib: 256, imageName: "fast-guest", accelerator: "ACCELERATOR_TCG" },
    });
    await until(
      "marker through the API",
      async () => (await apiLogLines(h, wid)).some((l) => l.startsWith(MARKER)),
      180_000,
    );
    persysMs.push(performance.now() - started);
    await h.rest("DELETE", `/v1/workloads/${wid}`);
  }
  const p = Math.round(median(persysMs));
  const d = Math.round(median(directMs));
  console.log(
    JSON.stringify({
      persysBootToMarkerMs: p,
      directQemuBootToMarkerMs: d,
      ratio: Math.round((p / d) * 100) / 100,
      runs,
      persysRunsMs: persysMs.map(Math.round),
      directRunsMs: directMs.map(Math.round),
      loadAverage: loadavg()[0],
      qemuNice: priority,
    }),
  );
} finally {
  await h.close();
}
