import * as pulumi from "@pulumi/pulumi";
import type { CloudInitArgs, VmDiskArgs, VmNetworkArgs } from "./types.js";
import { propertyBag, WORKLOAD_INPUTS, type WorkloadArgs, type WorkloadOutputs } from "./workload-args.js";

type In<T> = pulumi.Input<T>;

/** Inputs of {@link VirtualMachine}: one of `imageName` and `imagePath`. */
export interface VirtualMachineArgs extends WorkloadArgs {
  vcpus: In<number>;
  /** Guest memory, which is also what each replica reserves. */
  memoryMiB: In<number>;
  /** Base image registered on the nodes under this name. Changing it replaces the VM. */
  imageName?: In<string>;
  /** Absolute path of the base image on the node. Changing it replaces the VM. */
  imagePath?: In<string>;
  /** Changing the disks replaces the VM. */
  disks?: In<In<VmDiskArgs>[]>;
  cloudInit?: In<CloudInitArgs>;
  networks?: In<In<VmNetworkArgs>[]>;
  /** `auto` (the default: KVM where it boots, else TCG), `kvm` or `tcg`. */
  accelerator?: In<"auto" | "kvm" | "tcg">;
  machineType?: In<string>;
}

/** Input names of {@link VirtualMachine}, as in the schema. */
export const VIRTUAL_MACHINE_INPUTS = [
  ...WORKLOAD_INPUTS,
  "vcpus",
  "memoryMiB",
  "imageName",
  "imagePath",
  "disks",
  "cloudInit",
  "networks",
  "accelerator",
  "machineType",
] as const;

/**
 * A KVM/QEMU virtual machine workload on a node with the `vm` runtime.
 *
 * ```ts
 * new VirtualMachine("db", { vcpus: 2, memoryMiB: 2048, imageName: "debian-12", disks: [{ name: "root", sizeGiB: 10, boot: true }] });
 * ```
 */
export class VirtualMachine extends pulumi.CustomResource implements WorkloadOutputs {
  /** @internal */
  static readonly __pulumiType = "persys:index:VirtualMachine";

  static get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): VirtualMachine {
    return new VirtualMachine(name, undefined, { ...opts, id });
  }

  static override isInstance(obj: unknown): obj is VirtualMachine {
    return (
      pulumi.CustomResource.isInstance(obj) &&
      (obj as { __pulumiType?: string }).__pulumiType === VirtualMachine.__pulumiType
    );
  }

  declare readonly name: pulumi.Output<string>;
  declare readonly vcpus: pulumi.Output<number>;
  declare readonly memoryMiB: pulumi.Output<number>;
  declare readonly revision: pulumi.Output<string>;
  declare readonly status: pulumi.Output<string>;
  declare readonly placements: WorkloadOutputs["placements"];
  declare readonly endpoints: WorkloadOutputs["endpoints"];

  constructor(name: string, args: VirtualMachineArgs | undefined, opts?: pulumi.CustomResourceOptions) {
    super(VirtualMachine.__pulumiType, name, propertyBag(args, VIRTUAL_MACHINE_INPUTS), opts);
  }
}
