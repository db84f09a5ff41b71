/**
 * A VM replica as the VM driver creates it, from the api.v1 VmSpec (already validated by the same
 * rules as the API). Pure.
 */
import { api } from "@persys/schema";

/** `auto`: KVM when the node proved it boots guests, else TCG. */
export type VmAccel = "auto" | "kvm" | "tcg";

export interface VmDiskSpec {
  /** Unique among the VM's disks; names the overlay file and the guest disk serial. */
  readonly name: string;
  readonly sizeGib: number;
  /** Storage pool name; empty: the node's default pool. */
  readonly pool: string;
  readonly format: "qcow2" | "raw";
  /** The boot disk is an overlay on the base image; others are blank. */
  readonly boot: boolean;
}

export interface VmRuntimeSpec {
  readonly vcpus: number;
  readonly memoryMib: number;
  /** Empty: q35. */
  readonly machine: string;
  /** A base image registered on the node by name, or an image file (or image manifest) by path. */
  readonly image: { readonly kind: "name" | "path"; readonly value: string };
  readonly disks: readonly VmDiskSpec[];
  readonly cloudInit?: { readonly userData: string; readonly metaData: string; readonly networkConfig: string };
  /** Networks by libvirt name; an empty MAC is generated (and recorded) on first define. */
  readonly networks: readonly { readonly network: string; readonly mac: string }[];
  readonly accel: VmAccel;
  /** ACPI shutdown grace before the domain is destroyed. */
  readonly stopTimeoutSeconds: number;
}

const accels: Record<number, VmAccel> = {
  [api.Accelerator.ACCELERATOR_KVM]: "kvm",
  [api.Accelerator.ACCELERATOR_TCG]: "tcg",
};

/** Default ACPI shutdown grace (a Debian guest under TCG needs ~20 s). */
export const DEFAULT_VM_STOP_TIMEOUT_SECONDS = 60;

/** The runtime spec of a validated api.v1 VmSpec. */
export function vmRuntimeSpec(vm: api.VmSpec): VmRuntimeSpec {
  const image = vm.baseImage;
  return {
    vcpus: vm.vcpus,
    memoryMib: vm.memoryMib,
    machine: vm.machineType,
    image:
      image?.$case === "imagePath" ? { kind: "path", value: image.value } : { kind: "name", value: image?.value ?? "" },
    disks: vm.disks.map((d, i) => ({
      name: d.name || (d.boot ? "root" : `disk${i}`),
      sizeGib: d.sizeGib,
      pool: d.pool,
      format: d.format === api.DiskFormat.DISK_FORMAT_RAW ? "raw" : "qcow2",
      boot: d.boot,
    })),
    ...(vm.cloudInit
      ? {
          cloudInit: {
            userData: vm.cloudInit.userData,
            metaData: vm.cloudInit.metaData,
            networkConfig: vm.cloudInit.networkConfig,
          },
        }
      : {}),
    networks: vm.networks.map((n) => ({ network: n.network, mac: n.mac.toLowerCase() })),
    accel: accels[vm.accelerator] ?? "auto",
    stopTimeoutSeconds: DEFAULT_VM_STOP_TIMEOUT_SECONDS,
  };
}
