/**
 * libvirt through `virsh` subprocesses (see docs/decisions/0006-libvirt-through-virsh.md): every
 * call is one `virsh -c <uri> ...` run without a shell, with a deadline, its failure classified from
 * libvirt's message into a typed PersysError.
 *
 * ```ts
 * const virsh = await Virsh.find("qemu:///system");
 * await virsh.define("/var/lib/persys-agent/vm/web-0/domain.xml");
 * await virsh.start("web-0");
 * (await virsh.state("web-0")).state; // "running"
 * ```
 */
import { PersysError } from "@persys/schema";
import { findHostTool, type HostTool, runHostTool } from "./host-tool.js";

/** libvirt's domain states as `virsh domstate` words them. */
export type DomainStateName =
  | "running"
  | "idle"
  | "paused"
  | "in shutdown"
  | "shut off"
  | "crashed"
  | "pmsuspended"
  | "no state";

export interface DomainState {
  readonly state: DomainStateName;
  /** libvirt's reason, e.g. `booted`, `shutdown`, `destroyed`, `crashed`, `panicked`, `failed`. */
  readonly reason: string;
}

export interface DomainAddress {
  readonly mac: string;
  readonly ip: string;
}

export interface DomainStats {
  /** Total vCPU time, nanoseconds. */
  readonly cpuTimeNs: number;
  /** Guest memory in use as the balloon reports it (RSS when available), bytes. */
  readonly memoryBytes: number;
}

const unreachable =
  /Failed to connect socket|failed to connect to the hypervisor|no connection driver|Cannot recv data|End of file while reading|client socket is closed|not connected/i;
const notFound =
  /Domain not found|no domain with matching|failed to get domain|Storage pool not found|Storage volume not found|no storage (pool|vol) with matching/i;
const conflict = /domain is not running|is not running|already active|already running/i;
const badXml = /XML error|unsupported configuration|XML document failed to validate|expected unit|invalid argument/i;

/**
 * A virsh failure as a PersysError: libvirtd unreachable → RUNTIME_UNAVAILABLE (retryable); no such
 * domain → NOT_FOUND; not running / already running → CONFLICT; XML rejected at define →
 * INVALID_SPEC; else RUNTIME_ERROR. The message keeps libvirt's words.
 */
export function classifyVirshError(error: unknown, what: string): PersysError {
  const text = (error instanceof Error ? error.message : String(error)).replace(/^virsh exited with \d+: /, "");
  if (error instanceof PersysError && error.code !== "RUNTIME_ERROR") return error;
  if (unreachable.test(text)) {
    return new PersysError("RUNTIME_UNAVAILABLE", `libvirt ${what}: libvirtd does not answer: ${text}`, {
      cause: error,
      retryable: true,
    });
  }
  if (notFound.test(text)) return new PersysError("NOT_FOUND", `libvirt ${what}: ${text}`, { cause: error });
  if (conflict.test(text)) return new PersysError("CONFLICT", `libvirt ${what}: ${text}`, { cause: error });
  if (what.startsWith("define") && badXml.test(text)) {
    return new PersysError("INVALID_SPEC", `libvirt ${what}: the domain XML was rejected: ${text}`, { cause: error });
  }
  return new PersysError("RUNTIME_ERROR", `libvirt ${what}: ${text}`, { cause: error });
}

/** Parses `virsh domstate --reason` output ("shut off (destroyed)"). */
export function parseDomState(text: string): DomainState {
  const m = /^\s*([a-z ]+?)\s*(?:\(([^)]*)\))?\s*$/.exec(text.trim().split("\n")[0] ?? "");
  return { state: (m?.[1] ?? "no state") as DomainStateName, reason: m?.[2] ?? "" };
}

/** Parses `virsh domifaddr` output: one row per address, `vnet0  52:54:00:..  ipv4  10.0.0.5/24`. */
export function parseDomIfAddr(text: string): DomainAddress[] {
  const out: DomainAddress[] = [];
  let mac = "";
  for (const line of text.split("\n")) {
    const cols = line.trim().split(/\s+/);
    if (cols.length === 4 && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(cols[1] ?? "")) {
      mac = (cols[1] ?? "").toLowerCase();
      out.push({ mac, ip: (cols[3] ?? "").replace(/\/\d+$/, "") });
    } else if (cols.length === 3 && cols[0] === "-" && mac) {
      out.push({ mac, ip: (cols[2] ?? "").replace(/\/\d+$/, "") });
    }
  }
  return out;
}

/** Parses `virsh domstats --raw` key=value lines. */
export function parseDomStats(text: string): DomainStats {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^\s*([\w.]+)=(\d+)\s*$/.exec(line);
    if (m) values.set(m[1] ?? "", Number(m[2]));
  }
  const kib = values.get("balloon.rss") ?? values.get("balloon.current") ?? 0;
  return { cpuTimeNs: values.get("cpu.time") ?? 0, memoryBytes: kib * 1024 };
}

/** A connection to one libvirt URI through virsh. */
export class Virsh {
  private constructor(
    readonly uri: string,
    readonly tool: HostTool,
  ) {}

  /** Finds virsh (RUNTIME_UNAVAILABLE naming libvirt-clients when it is not installed). */
  static async find(uri: string): Promise<Virsh> {
    return new Virsh(uri, await findHostTool(["virsh"], "libvirt-clients"));
  }

  /** The arguments of a virsh run against this URI (for long-running children such as `event`). */
  args(...args: string[]): string[] {
    return ["-q", "-c", this.uri, ...args];
  }

  /** Runs one virsh command; resolves with stdout, rejects with a classified PersysError. */
  async run(what: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
    try {
      return (await runHostTool(this.tool, this.args(...args), { timeoutMs })).stdout;
    } catch (error) {
      throw classifyVirshError(error, what);
    }
  }

  /** libvirt and hypervisor versions; throws RUNTIME_UNAVAILABLE when libvirtd does not answer. */
  version(): Promise<string> {
    return this.run("version", ["version"], 15_000);
  }

  /** Defines (or redefines) a domain from an XML file. */
  async define(xmlPath: string): Promise<void> {
    await this.run(`define ${xmlPath}`, ["define", xmlPath]);
  }

  async start(name: string): Promise<void> {
    await this.run(`start ${name}`, ["start", name]);
  }

  /** Asks the guest to power off (ACPI power button); returns at once. */
  async shutdown(name: string): Promise<void> {
    await this.run(`shutdown ${name}`, ["shutdown", name, "--mode", "acpi"]);
  }

  /** Pulls the plug. */
  async destroy(name: string): Promise<void> {
    await this.run(`destroy ${name}`, ["destroy", name]);
  }

  /**
   * Asks the guest to reboot (ACPI); returns at once. libvirt's QEMU driver presses the power
   * button and, when the guest powers off, resets it in the same QEMU process instead of ending it
   * (a `reboot` event follows). A guest that ignores ACPI does nothing.
   */
  async reboot(name: string): Promise<void> {
    await this.run(`reboot ${name}`, ["reboot", name, "--mode", "acpi"]);
  }

  /** Resets the guest at once (the reset button: same QEMU process, no guest shutdown). */
  async reset(name: string): Promise<void> {
    await this.run(`reset ${name}`, ["reset", name]);
  }

  /** Removes the definition (with NVRAM, managed save and snapshot metadata). */
  async undefine(name: string): Promise<void> {
    try {
      await this.run(`undefine ${name}`, ["undefine", name, "--nvram", "--managed-save", "--snapshots-metadata"]);
    } catch (error) {
      if (!(error instanceof PersysError) || error.code !== "RUNTIME_ERROR") throw error;
      await this.run(`undefine ${name}`, ["undefine", name]);
    }
  }

  /** The domain's state and reason; undefined when there is no such domain. */
  async state(name: string): Promise<DomainState | undefined> {
    try {
      return parseDomState(await this.run(`domstate ${name}`, ["domstate", name, "--reason"], 15_000));
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }

  /** The domain's XML (live when running; `inactive`: the persistent definition). */
  xml(name: string, inactive = false): Promise<string> {
    return this.run(`dumpxml ${name}`, ["dumpxml", name, ...(inactive ? ["--inactive"] : [])], 15_000);
  }

  /** Every domain's name (running or not). */
  async names(): Promise<string[]> {
    const out = await this.run("list", ["list", "--all", "--name"], 15_000);
    return out
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
  }

  /** Addresses of a running domain's NICs from libvirt's DHCP leases (empty when none yet). */
  async addresses(name: string): Promise<DomainAddress[]> {
    try {
      return parseDomIfAddr(await this.run(`domifaddr ${name}`, ["domifaddr", name, "--source", "lease"], 15_000));
    } catch {
      return [];
    }
  }

  /** CPU time and memory of a running domain. */
  async stats(name: string): Promise<DomainStats> {
    return parseDomStats(
      await this.run(`domstats ${name}`, ["domstats", name, "--cpu-total", "--balloon", "--raw"], 15_000),
    );
  }
}
