/**
 * What the VM suites need from the test command (`scripts/test.sh` with `scripts/lib/libvirt.sh`):
 * libvirtd answering at $PERSYS_LIBVIRT_URI, the isolated test network, and the guest fixtures built
 * by test/fixtures/vm/. A missing piece fails loudly; no suite is skipped.
 *
 * Domains made here are named `persys-test-*`, so persys_stop_libvirt removes any a crashed run left.
 * Guests boot one at a time across test files ({@link withBootSlot}): TCG guests are CPU-heavy and
 * the machine has two shared cores.
 */
import { randomBytes } from "node:crypto";
import { chmod, copyFile, mkdir, mkdtemp, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { findHostTool, type HostTool, runHostTool } from "../../agent/src/runtimes/vm/host-tool.js";

function required(variable: string, what: string): string {
  const value = process.env[variable];
  if (!value) {
    throw new Error(
      `${what} is not available to this test run (${variable} is unset). ` +
        "Run the suite with ./scripts/test.sh, which installs libvirt, starts it and builds the guests.",
    );
  }
  return value;
}

/** libvirt connection URI, e.g. qemu:///system. */
export function libvirtUri(): string {
  return required("PERSYS_LIBVIRT_URI", "libvirtd");
}

/** The isolated libvirt network guests may use (DHCP from the host, no route out). */
export function testNetwork(): string {
  return required("PERSYS_LIBVIRT_NETWORK", "the libvirt test network");
}

/** A built guest fixture: kernel, initrd and the command line to boot it with. */
export interface GuestFixture {
  readonly dir: string;
  readonly kernel: string;
  readonly initrd: string;
  readonly cmdline: string;
  /** The qcow2 base image (real guest only). */
  readonly base?: string;
}

async function fixture(variable: string, what: string, initrdName: string, base?: string): Promise<GuestFixture> {
  const dir = required(variable, what);
  const cmdline = (await readFile(join(dir, "cmdline"), "utf8")).trim();
  return {
    dir,
    kernel: join(dir, "kernel"),
    initrd: join(dir, initrdName),
    cmdline,
    ...(base ? { base: join(dir, base) } : {}),
  };
}

/** The busybox fast guest (test/fixtures/vm/build-fast-guest.sh). */
export function fastGuest(): Promise<GuestFixture> {
  return fixture("PERSYS_TEST_VM_FAST_GUEST", "the fast guest fixture", "initramfs.cpio.gz");
}

/** The Debian + cloud-init guest (test/fixtures/vm/build-real-guest.sh). */
export function realGuest(): Promise<GuestFixture> {
  return fixture("PERSYS_TEST_VM_REAL_GUEST", "the real guest fixture", "initrd.img", "base.qcow2");
}

let virshTool: Promise<HostTool> | undefined;

/** Runs `virsh -c <uri> ...args` and returns its stdout. */
export async function virsh(...args: string[]): Promise<string> {
  virshTool ??= findHostTool(["virsh"], "libvirt-clients");
  const { stdout } = await runHostTool(await virshTool, ["-c", libvirtUri(), ...args], { timeoutMs: 60_000 });
  return stdout;
}

/** The domain's state as virsh words it ("running", "shut off", ...), or undefined when there is none. */
export async function domainState(name: string): Promise<string | undefined> {
  try {
    return (await virsh("domstate", name)).trim();
  } catch {
    return undefined;
  }
}

/** Destroys and undefines a domain; fine when it is already gone. */
export async function removeDomain(name: string): Promise<void> {
  if ((await domainState(name)) === undefined) return;
  await virsh("destroy", name).catch(() => undefined);
  await virsh("undefine", name);
}

/** Defines a domain from XML text (through a file, as virsh wants). */
export async function defineDomain(dir: string, xml: string): Promise<void> {
  const file = join(dir, "domain.xml");
  await writeFile(file, xml);
  await virsh("define", file);
}

/** A unique domain name, `persys-test-<what>-<random>`. */
export function testDomainName(what: string): string {
  return `persys-test-${what}-${randomBytes(3).toString("hex")}`;
}

/**
 * A scratch folder for one VM, outside the run folder: libvirt's QEMU runs as libvirt-qemu and must
 * traverse to the overlay and seed, and the run folder is private to root.
 */
export async function vmWorkDir(what: string): Promise<string> {
  const dir = await mkdtemp(join("/tmp", `persys-vm-${what}-`));
  await chmod(dir, 0o755);
  return dir;
}

export async function removeWorkDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** Console text with CR removed (the serial line ends lines with CRLF). */
export async function readConsole(path: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).replace(/\r/g, "");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw error;
  }
}

/**
 * Waits until the console log, from character `from` on, matches `pattern`. Resolves with the
 * match and the time waited; rejects after `timeoutMs` with the console tail, or earlier when the
 * domain stopped running (`name` given) without printing it.
 */
export async function waitForConsole(
  path: string,
  pattern: RegExp,
  options: { timeoutMs: number; from?: number; domain?: string },
): Promise<{ match: RegExpMatchArray; ms: number; text: string }> {
  const started = performance.now();
  let text = "";
  let checks = 0;
  while (performance.now() - started < options.timeoutMs) {
    text = (await readConsole(path)).slice(options.from ?? 0);
    const match = text.match(pattern);
    if (match) return { match, ms: Math.round(performance.now() - started), text };
    if (options.domain && ++checks % 10 === 0) {
      const state = await domainState(options.domain);
      if (state !== "running") {
        text = (await readConsole(path)).slice(options.from ?? 0);
        const late = text.match(pattern);
        if (late) return { match: late, ms: Math.round(performance.now() - started), text };
        throw new Error(
          `${options.domain} is ${state ?? "gone"} without printing ${pattern}; console tail:\n${tail(text)}`,
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no ${pattern} on the console within ${options.timeoutMs} ms; console tail:\n${tail(text)}`);
}

/** Waits until the domain reaches `state` (virsh wording). */
export async function waitForState(name: string, state: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  let last: string | undefined;
  while (performance.now() - started < timeoutMs) {
    last = await domainState(name);
    if (last === state) return Math.round(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${name} did not reach "${state}" within ${timeoutMs} ms (it is ${last ?? "gone"})`);
}

const bootLock = "/tmp/persys-test-vm-boot.lock";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Runs `fn` while holding the machine-wide guest boot slot (a lock file naming its holder's pid; a
 * lock whose holder died is taken over). Suites that boot a guest wrap the boot in this, so their
 * timeouts must allow for waiting behind another suite's guest.
 */
export async function withBootSlot<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  for (;;) {
    try {
      const handle = await open(bootLock, "wx");
      await handle.writeFile(`${process.pid} ${what}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number.parseInt((await readFile(bootLock, "utf8").catch(() => "")).split(" ")[0] ?? "", 10);
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) await rm(bootLock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  const waited = Math.round(performance.now() - started);
  if (waited > 2_000) console.log(`[vm] ${what} waited ${waited} ms for the guest boot slot`);
  try {
    return await fn();
  } finally {
    await rm(bootLock, { force: true });
  }
}

/** Keeps a console log in test-results/vm/ (the VM's folder is removed), for reading after a run. */
export async function saveConsole(path: string, name: string): Promise<void> {
  const dir = resolve(import.meta.dirname, "../../test-results/vm");
  await mkdir(dir, { recursive: true });
  await copyFile(path, join(dir, `${name}.console.log`)).catch(() => undefined);
}

export function tail(text: string, lines = 25): string {
  return text.split("\n").slice(-lines).join("\n");
}

/** Size and modification time of a file, to show a base image was not written. */
export async function fileStamp(path: string): Promise<string> {
  const info = await stat(path);
  return `${info.size}@${info.mtimeMs}`;
}

/** A locally administered unicast MAC in QEMU's 52:54:00 range. */
export function randomMac(): string {
  const bytes = [...randomBytes(3)].map((b) => b.toString(16).padStart(2, "0"));
  return `52:54:00:${bytes.join(":")}`;
}
