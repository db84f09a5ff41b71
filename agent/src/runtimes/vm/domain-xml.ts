/**
 * The libvirt domain XML of a Persys VM replica, and the reading back of the Persys metadata in it.
 *
 * ```ts
 * const xml = buildDomainXml({
 *   name: "persys-web-0", vcpus: 2, memoryMiB: 1024, accel: "tcg",
 *   boot: { kind: "disk" },
 *   disks: [{ path: "/var/lib/persys/vm/web-0/root.qcow2", target: "vda" }],
 *   seed: { path: "/var/lib/persys/vm/web-0/seed.iso" },
 *   networks: [{ network: "default", mac: "52:54:00:12:34:56" }],
 *   console: { logPath: "/var/lib/persys/vm/web-0/console.log" },
 *   metadata: { workload: "web", replica: "web-0", revision: "3f2a", node: "node-1" },
 * });
 * parseReplicaMetadata(await domain.getXMLDesc()); // → { workload: "web", ... } after an agent restart
 * ```
 *
 * Every value is XML-escaped; values XML cannot carry (control characters) and malformed names,
 * paths, MACs or sizes fail with INVALID_SPEC naming the field, so bad input never reaches libvirt.
 * No graphics device is added (the Go agent exposed VNC on 0.0.0.0); the console is the serial port.
 */
import { type FieldViolation, invalid } from "@persys/schema";

/** XML namespace of the Persys metadata element; the version is part of it. */
export const persysReplicaNamespace = "https://persys.dev/xmlns/replica/1";
const persysPrefix = "persys";

/** How the guest is virtualised: `kvm` (libvirt domain type kvm) or `tcg` (type qemu, emulation). */
export type Accelerator = "kvm" | "tcg";

export interface DomainDisk {
  /** Absolute path of the image (for a replica, a qcow2 overlay on the base image). */
  readonly path: string;
  /** Guest device name: vda, vdb, ... for virtio; sda, ... for scsi/sata. */
  readonly target: string;
  /** Default virtio. */
  readonly bus?: "virtio" | "scsi" | "sata";
  /** Default qcow2. */
  readonly format?: "qcow2" | "raw";
  readonly readOnly?: boolean;
  /** Guest-visible serial (`/dev/disk/by-id/virtio-<serial>`), e.g. the Persys disk name. */
  readonly serial?: string;
}

export interface DomainNetwork {
  /** libvirt network name. */
  readonly network: string;
  /** Unicast MAC; absent: libvirt generates one (read it back from the live XML). */
  readonly mac?: string;
  /** Default virtio. */
  readonly model?: "virtio" | "e1000e";
}

/** Boot a kernel directly (fast test guests, images without a bootloader) or from the first disk. */
export type DomainBoot =
  | { readonly kind: "kernel"; readonly kernel: string; readonly initrd?: string; readonly cmdline?: string }
  | { readonly kind: "disk" };

export interface DomainConsole {
  /** Where the serial console is written, appended across restarts. */
  readonly logPath: string;
  /**
   * `file` (default): the serial port writes straight into logPath.
   * `pty`: an interactive pty (`virsh console`) whose output virtlogd also writes to logPath,
   * rotated by virtlogd (max_size/max_backups in virtlogd.conf).
   */
  readonly mode?: "file" | "pty";
}

/** What ties a domain to a Persys replica; read back by {@link parseReplicaMetadata}. */
export interface ReplicaMetadata {
  readonly workload: string;
  readonly replica: string;
  readonly revision: string;
  readonly node: string;
}

export interface DomainSpec {
  /** libvirt domain name (unique on the host). */
  readonly name: string;
  /** Lowercase RFC 4122 text; absent: libvirt assigns one. */
  readonly uuid?: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** QEMU machine type; default q35. */
  readonly machine?: string;
  readonly accel: Accelerator;
  readonly boot: DomainBoot;
  readonly disks: readonly DomainDisk[];
  /** The cloud-init NoCloud seed image, attached read-only as a cdrom. */
  readonly seed?: { readonly path: string };
  readonly networks?: readonly DomainNetwork[];
  readonly console: DomainConsole;
  readonly metadata?: ReplicaMetadata;
  /** What libvirt does when the guest powers off, reboots or crashes. Default destroy, restart, destroy. */
  readonly lifecycle?: {
    readonly onPoweroff?: LifecycleAction;
    readonly onReboot?: LifecycleAction;
    readonly onCrash?: LifecycleAction;
  };
}

export type LifecycleAction = "destroy" | "restart" | "preserve";

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,199}$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const machinePattern = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const macPattern = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/;
const networkPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const diskSerialPattern = /^[A-Za-z0-9_.-]{1,20}$/;
const targetPatterns = { virtio: /^vd[a-z]{1,2}$/, scsi: /^sd[a-z]{1,2}$/, sata: /^sd[a-z]{1,2}$/ } as const;
/** Whether the text has a character XML 1.0 cannot carry, escaped or not (controls, lone surrogates). */
function hasNonXmlChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return true;
    if (c === 0xfffe || c === 0xffff) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/** Escapes text for an XML element body or a quoted attribute value. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`);
}

function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#[0-9]+);/g, (_, entity: string) => {
    if (entity.startsWith("#x")) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[entity] ?? "";
  });
}

/** Checks a spec; every problem is reported, with its field path. */
export function domainSpecViolations(spec: DomainSpec): FieldViolation[] {
  const out: FieldViolation[] = [];
  const bad = (path: string, reason: string) => out.push({ path, reason });
  const text = (path: string, value: string | undefined) => {
    if (value !== undefined && hasNonXmlChar(value)) bad(path, "contains a control character XML cannot carry");
  };
  const absolute = (path: string, value: string) => {
    if (!value.startsWith("/")) bad(path, "must be an absolute path");
    else if (value.split("/").includes("..")) bad(path, "must not contain '..'");
    text(path, value);
  };

  if (!namePattern.test(spec.name)) bad("name", "must be 1-200 letters, digits, '_', '.', '+' or '-'");
  if (spec.uuid !== undefined && !uuidPattern.test(spec.uuid)) bad("uuid", "must be a lowercase UUID");
  if (!Number.isInteger(spec.vcpus) || spec.vcpus < 1 || spec.vcpus > 256) bad("vcpus", "must be 1-256");
  if (!Number.isInteger(spec.memoryMiB) || spec.memoryMiB < 32 || spec.memoryMiB > 4_194_304) {
    bad("memoryMiB", "must be an integer from 32 to 4194304");
  }
  if (spec.machine !== undefined && !machinePattern.test(spec.machine)) bad("machine", "must be a QEMU machine type");
  if (spec.accel !== "kvm" && spec.accel !== "tcg") bad("accel", "must be kvm or tcg");

  if (spec.boot.kind === "kernel") {
    absolute("boot.kernel", spec.boot.kernel);
    if (spec.boot.initrd !== undefined) absolute("boot.initrd", spec.boot.initrd);
    text("boot.cmdline", spec.boot.cmdline);
  } else if (spec.boot.kind !== "disk") bad("boot.kind", "must be kernel or disk");
  if (spec.boot.kind === "disk" && spec.disks.length === 0) bad("disks", "booting from disk needs a disk");

  const targets = new Set<string>();
  spec.disks.forEach((disk, i) => {
    const path = `disks[${i}]`;
    absolute(`${path}.path`, disk.path);
    const bus = disk.bus ?? "virtio";
    if (!(bus in targetPatterns)) bad(`${path}.bus`, "must be virtio, scsi or sata");
    else if (!targetPatterns[bus].test(disk.target)) {
      bad(`${path}.target`, `must be ${bus === "virtio" ? "vda, vdb, ..." : "sda, sdb, ..."} for bus ${bus}`);
    }
    if (targets.has(disk.target)) bad(`${path}.target`, `${disk.target} is used twice`);
    targets.add(disk.target);
    if (disk.format !== undefined && disk.format !== "qcow2" && disk.format !== "raw") {
      bad(`${path}.format`, "must be qcow2 or raw");
    }
    if (disk.serial !== undefined && !diskSerialPattern.test(disk.serial)) {
      bad(`${path}.serial`, "must be 1-20 letters, digits, '_', '.' or '-'");
    }
  });
  if (spec.seed) {
    absolute("seed.path", spec.seed.path);
    if (targets.has(seedTarget(spec).dev)) bad("seed", `its device ${seedTarget(spec).dev} is taken by a disk`);
  }

  const macs = new Set<string>();
  (spec.networks ?? []).forEach((network, i) => {
    const path = `networks[${i}]`;
    if (!networkPattern.test(network.network)) bad(`${path}.network`, "must be a libvirt network name");
    if (network.mac !== undefined) {
      const mac = network.mac.toLowerCase();
      if (!macPattern.test(mac)) bad(`${path}.mac`, "must be a MAC address like 52:54:00:12:34:56");
      else if (Number.parseInt(mac.slice(0, 2), 16) & 1) bad(`${path}.mac`, "must be a unicast MAC (even first octet)");
      if (macs.has(mac)) bad(`${path}.mac`, `${mac} is used twice`);
      macs.add(mac);
    }
    if (network.model !== undefined && network.model !== "virtio" && network.model !== "e1000e") {
      bad(`${path}.model`, "must be virtio or e1000e");
    }
  });

  absolute("console.logPath", spec.console.logPath);
  if (spec.console.mode !== undefined && spec.console.mode !== "file" && spec.console.mode !== "pty") {
    bad("console.mode", "must be file or pty");
  }
  if (spec.metadata) {
    for (const key of ["workload", "replica", "revision", "node"] as const) {
      const value = spec.metadata[key];
      if (!value) bad(`metadata.${key}`, "is required");
      text(`metadata.${key}`, value);
    }
  }
  for (const [key, action] of Object.entries(spec.lifecycle ?? {})) {
    if (action !== undefined && !["destroy", "restart", "preserve"].includes(action)) {
      bad(`lifecycle.${key}`, "must be destroy, restart or preserve");
    }
  }
  return out;
}

/** The cdrom slot of the seed: SATA on q35 (and other non-i440fx machines), IDE on pc (i440fx). */
function seedTarget(spec: DomainSpec): { dev: string; bus: string } {
  const machine = spec.machine ?? "q35";
  return /^pc($|-i440fx)/.test(machine) ? { dev: "hdc", bus: "ide" } : { dev: "sda", bus: "sata" };
}

/**
 * The domain XML for `spec`. Deterministic: the same spec gives the same text (so a revision hash of
 * it is stable). Throws INVALID_SPEC listing every violation.
 */
export function buildDomainXml(spec: DomainSpec): string {
  const violations = domainSpecViolations(spec);
  if (violations.length > 0) throw invalid("INVALID_SPEC", violations, "VM domain");
  const a = escapeXml;
  const lines: string[] = [];
  const add = (depth: number, line: string) => lines.push(`${"  ".repeat(depth)}${line}`);

  add(0, `<domain type='${spec.accel === "kvm" ? "kvm" : "qemu"}'>`);
  add(1, `<name>${a(spec.name)}</name>`);
  if (spec.uuid) add(1, `<uuid>${spec.uuid}</uuid>`);
  if (spec.metadata) {
    const m = spec.metadata;
    add(1, "<metadata>");
    add(
      2,
      `<${persysPrefix}:replica xmlns:${persysPrefix}='${persysReplicaNamespace}' workload='${a(m.workload)}' ` +
        `replica='${a(m.replica)}' revision='${a(m.revision)}' node='${a(m.node)}'/>`,
    );
    add(1, "</metadata>");
  }
  add(1, `<memory unit='MiB'>${spec.memoryMiB}</memory>`);
  add(1, `<currentMemory unit='MiB'>${spec.memoryMiB}</currentMemory>`);
  add(1, `<vcpu placement='static'>${spec.vcpus}</vcpu>`);
  add(1, "<os>");
  add(2, `<type arch='x86_64' machine='${a(spec.machine ?? "q35")}'>hvm</type>`);
  if (spec.boot.kind === "kernel") {
    add(2, `<kernel>${a(spec.boot.kernel)}</kernel>`);
    if (spec.boot.initrd) add(2, `<initrd>${a(spec.boot.initrd)}</initrd>`);
    if (spec.boot.cmdline) add(2, `<cmdline>${a(spec.boot.cmdline)}</cmdline>`);
  } else add(2, "<boot dev='hd'/>");
  add(1, "</os>");
  add(1, "<features><acpi/><apic/></features>");
  // host-passthrough under KVM; TCG emulates the default CPU model (emulating "max" is slower).
  if (spec.accel === "kvm") add(1, "<cpu mode='host-passthrough' check='none'/>");
  add(1, "<clock offset='utc'/>");
  add(1, `<on_poweroff>${spec.lifecycle?.onPoweroff ?? "destroy"}</on_poweroff>`);
  add(1, `<on_reboot>${spec.lifecycle?.onReboot ?? "restart"}</on_reboot>`);
  add(1, `<on_crash>${spec.lifecycle?.onCrash ?? "destroy"}</on_crash>`);
  add(1, "<devices>");
  for (const disk of spec.disks) {
    add(2, "<disk type='file' device='disk'>");
    add(3, `<driver name='qemu' type='${disk.format ?? "qcow2"}' discard='unmap'/>`);
    add(3, `<source file='${a(disk.path)}'/>`);
    add(3, `<target dev='${disk.target}' bus='${disk.bus ?? "virtio"}'/>`);
    if (disk.serial) add(3, `<serial>${a(disk.serial)}</serial>`);
    if (disk.readOnly) add(3, "<readonly/>");
    add(2, "</disk>");
  }
  if (spec.seed) {
    const target = seedTarget(spec);
    add(2, "<disk type='file' device='cdrom'>");
    add(3, "<driver name='qemu' type='raw'/>");
    add(3, `<source file='${a(spec.seed.path)}'/>`);
    add(3, `<target dev='${target.dev}' bus='${target.bus}'/>`);
    add(3, "<readonly/>");
    add(2, "</disk>");
  }
  for (const network of spec.networks ?? []) {
    add(2, "<interface type='network'>");
    add(3, `<source network='${a(network.network)}'/>`);
    if (network.mac) add(3, `<mac address='${network.mac.toLowerCase()}'/>`);
    add(3, `<model type='${network.model ?? "virtio"}'/>`);
    add(2, "</interface>");
  }
  const log = a(spec.console.logPath);
  if (spec.console.mode === "pty") {
    add(2, `<serial type='pty'><log file='${log}' append='on'/><target port='0'/></serial>`);
    add(2, `<console type='pty'><log file='${log}' append='on'/><target type='serial' port='0'/></console>`);
  } else {
    add(2, `<serial type='file'><source path='${log}' append='on'/><target port='0'/></serial>`);
    add(2, `<console type='file'><source path='${log}' append='on'/><target type='serial' port='0'/></console>`);
  }
  add(2, "<controller type='usb' model='none'/>");
  add(2, "<memballoon model='virtio'/>");
  add(2, "<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>");
  // pvpanic: a guest kernel panic (with the pvpanic driver loaded) is reported to libvirt and handled
  // by on_crash (crashed, not the reboot `panic=N` would make of it).
  add(2, "<panic model='isa'/>");
  add(1, "</devices>");
  add(0, "</domain>");
  return `${lines.join("\n")}\n`;
}

/**
 * The Persys replica metadata of a domain, from its XML as libvirt returns it (`virsh dumpxml`,
 * `getXMLDesc`), found by namespace whatever prefix the XML uses. Undefined when the domain carries
 * none (not ours) or an incomplete one.
 */
export function parseReplicaMetadata(domainXml: string): ReplicaMetadata | undefined {
  const metadata = /<metadata>([\s\S]*?)<\/metadata>/.exec(domainXml)?.[1];
  if (!metadata) return undefined;
  for (const tag of metadata.matchAll(/<([A-Za-z_][\w.-]*):replica\b([^>]*?)\/?>/g)) {
    const prefix = tag[1] ?? "";
    const attributes = new Map<string, string>();
    for (const attr of (tag[2] ?? "").matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      attributes.set(attr[1] ?? "", unescapeXml(attr[2] ?? attr[3] ?? ""));
    }
    if (attributes.get(`xmlns:${prefix}`) !== persysReplicaNamespace) continue;
    const workload = attributes.get("workload");
    const replica = attributes.get("replica");
    const revision = attributes.get("revision");
    const node = attributes.get("node");
    if (workload && replica && revision && node) return { workload, replica, revision, node };
  }
  return undefined;
}
