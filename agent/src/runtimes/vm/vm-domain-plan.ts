/**
 * The libvirt domain of a VM replica: names, MACs and the DomainSpec, from the desired replica and
 * what the node resolved (base image, disks, accelerator). Pure.
 */
import { createHash } from "node:crypto";
import type { VmReplica } from "../../replicas/desired-replica.js";
import type { Accelerator, DomainSpec } from "./domain-xml.js";
import type { ReplicaDisk, ResolvedImage } from "./vm-storage.js";

/**
 * The domain name of a replica on a node: `<replica id>.<node id>` — unique when several agents
 * share one libvirtd (tests do), and readable in `virsh list`.
 */
export function domainNameOf(replicaId: string, nodeId: string): string {
  return `${replicaId}.${nodeId}`;
}

/** A stable locally administered MAC in QEMU's range (52:54:00) for NIC `nic` of a replica. */
export function generatedMac(nodeId: string, replicaId: string, nic: number): string {
  const h = createHash("sha256").update(`${nodeId}/${replicaId}/${nic}`).digest();
  return ["52", "54", "00", ...[h[0], h[1], h[2]].map((b) => (b ?? 0).toString(16).padStart(2, "0"))].join(":");
}

/** The NICs of a replica: network (empty: the node default) and MAC (empty: generated, stable). */
export function plannedNetworks(
  d: VmReplica,
  nodeId: string,
  defaultNetwork: string,
): { network: string; mac: string }[] {
  return d.spec.networks.map((n, i) => ({
    network: n.network || defaultNetwork,
    mac: n.mac || generatedMac(nodeId, d.id, i),
  }));
}

const targets = "abcdefghijklmnopqrstuvwxyz";

export interface DomainPlanInput {
  readonly replica: VmReplica;
  readonly nodeId: string;
  readonly domain: string;
  readonly accel: Accelerator;
  readonly image: ResolvedImage;
  readonly disks: readonly ReplicaDisk[];
  readonly networks: readonly { network: string; mac: string }[];
  readonly seedPath?: string;
  readonly consolePath: string;
}

/**
 * The DomainSpec of a replica: boot disk first (vda), data disks after; a kernel image boots its
 * kernel with `root=/dev/vda` reachable through the boot overlay; the seed as a cdrom; the serial
 * console into the replica's console log; Persys metadata for adoption and GC.
 */
export function domainSpecOf(p: DomainPlanInput): DomainSpec {
  const d = p.replica;
  const ordered = [...p.disks].sort((a, b) => Number(b.boot) - Number(a.boot));
  return {
    name: p.domain,
    vcpus: d.spec.vcpus,
    memoryMiB: d.spec.memoryMib,
    ...(d.spec.machine ? { machine: d.spec.machine } : {}),
    accel: p.accel,
    boot: p.image.kernel
      ? {
          kind: "kernel",
          kernel: p.image.kernel,
          ...(p.image.initrd ? { initrd: p.image.initrd } : {}),
          ...(p.image.cmdline ? { cmdline: p.image.cmdline } : {}),
        }
      : { kind: "disk" },
    disks: ordered.map((disk, i) => ({
      path: disk.path,
      target: `vd${targets[i] ?? "z"}`,
      format: disk.format,
      serial: disk.name.slice(0, 20),
    })),
    ...(p.seedPath ? { seed: { path: p.seedPath } } : {}),
    networks: p.networks.map((n) => ({ network: n.network, mac: n.mac })),
    console: { logPath: p.consolePath },
    metadata: { workload: d.workloadId, replica: String(d.index), revision: d.revision, node: p.nodeId },
  };
}
