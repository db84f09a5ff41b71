import { api, type FieldViolation } from "@persys/schema";
import { parseEnum } from "../enums/friendly-enums.js";
import { checkKeys } from "./input-keys.js";
import { badEnum, finish, type WorkloadInput, workloadBase, workloadInputKeys } from "./workload-input.js";

/** One VM disk: an overlay on the base image (`boot`) or an empty data disk. */
export interface VmDiskInput {
  /** Unique among the VM's disks, e.g. `root`, `data`. */
  readonly name: string;
  readonly sizeGiB: number;
  /** libvirt storage pool. Default: the node's. */
  readonly pool?: string | undefined;
  /** Default `qcow2`. */
  readonly format?: "qcow2" | "raw" | undefined;
  /** The disk to boot from (at most one). */
  readonly boot?: boolean | undefined;
}

/** A virtual machine in friendly form: one of `imageName` and `imagePath`. See {@link vm}. */
export interface VmInput extends WorkloadInput {
  readonly vcpus: number;
  /** Guest memory, which is also what each replica reserves. */
  readonly memoryMiB: number;
  /** Image registered on the nodes under this name. */
  readonly imageName?: string | undefined;
  /** Absolute path of the image file on the node. */
  readonly imagePath?: string | undefined;
  readonly disks?: readonly VmDiskInput[] | undefined;
  /** NoCloud seed documents, passed verbatim. */
  readonly cloudInit?:
    | {
        readonly userData?: string | undefined;
        readonly metaData?: string | undefined;
        readonly networkConfig?: string | undefined;
      }
    | undefined;
  /** libvirt networks to attach. Default: the node's default network. */
  readonly networks?: readonly { readonly network: string; readonly mac?: string | undefined }[] | undefined;
  /** `auto` (the default: KVM where it boots, else TCG), `kvm` or `tcg`. */
  readonly accelerator?: "auto" | "kvm" | "tcg" | undefined;
  /** libvirt machine type, e.g. `q35`. */
  readonly machineType?: string | undefined;
}

const vmKeys = [
  ...workloadInputKeys,
  "vcpus",
  "imageName",
  "imagePath",
  "disks",
  "cloudInit",
  "networks",
  "accelerator",
  "machineType",
];

/**
 * A VM workload (`api.Workload` with a `vm` spec), with defaults applied and validated before any
 * network call. Reservations default from the guest: `vcpus × 1000` millicores (override with
 * `cpuMillicores`), the guest memory, and the sum of the disk sizes (override with `diskGiB`).
 *
 * ```ts
 * vm({ id: "db", vcpus: 2, memoryMiB: 2048, imageName: "debian-12", disks: [{ name: "root", sizeGiB: 10, boot: true }] })
 * ```
 *
 * @throws PersysError INVALID_SPEC naming every bad field (e.g. both `imageName` and `imagePath`).
 */
export function vm(input: VmInput): api.Workload {
  const violations: FieldViolation[] = [];
  checkKeys(input, vmKeys, "", violations);
  (input.disks ?? []).forEach((d, i) => {
    checkKeys(d, ["name", "sizeGiB", "pool", "format", "boot"], `disks[${i}]`, violations);
  });
  if (input.imageName !== undefined && input.imagePath !== undefined) {
    violations.push({ path: "vm", reason: "give one of imageName or imagePath, not both" });
  }
  const disks = input.disks ?? [];
  const workload = workloadBase(input, api.WorkloadKind.WORKLOAD_KIND_VM, violations, {
    cpuMillicores: Math.round(input.vcpus * 1000),
    memoryMiB: input.memoryMiB,
    diskGiB: disks.reduce((sum, d) => sum + d.sizeGiB, 0),
  });
  const spec = api.VmSpec.fromPartial({
    vcpus: input.vcpus,
    memoryMib: input.memoryMiB,
    machineType: input.machineType ?? "",
    baseImage:
      input.imageName !== undefined
        ? { $case: "imageName", value: input.imageName }
        : input.imagePath !== undefined
          ? { $case: "imagePath", value: input.imagePath }
          : undefined,
    disks: disks.map((d, i) => ({
      name: d.name,
      sizeGib: d.sizeGiB,
      pool: d.pool ?? "",
      format:
        d.format === undefined
          ? api.DiskFormat.DISK_FORMAT_QCOW2
          : (parseEnum(api.DiskFormat, d.format) ?? badEnum(violations, `vm.disks[${i}].format`, d.format)),
      boot: d.boot ?? false,
    })),
    cloudInit: input.cloudInit
      ? {
          userData: input.cloudInit.userData ?? "",
          metaData: input.cloudInit.metaData ?? "",
          networkConfig: input.cloudInit.networkConfig ?? "",
        }
      : undefined,
    networks: (input.networks ?? []).map((n) => ({ network: n.network, mac: n.mac ?? "" })),
    accelerator:
      input.accelerator === undefined
        ? api.Accelerator.ACCELERATOR_AUTO
        : (parseEnum(api.Accelerator, input.accelerator) ?? badEnum(violations, "vm.accelerator", input.accelerator)),
  });
  return finish({ ...workload, spec: { $case: "vm", value: spec } }, violations);
}
