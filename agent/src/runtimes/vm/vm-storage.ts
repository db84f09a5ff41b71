/**
 * Where a VM replica's files live and how its disks are made. Base images are never written or
 * removed here: a replica's boot disk is a qcow2 overlay whose backing file is the base image, and
 * every file a replica owns (overlays, blank data disks, seed, console log, domain XML) is under its
 * own folder, which delete removes whole.
 *
 * Layout under the storage root (`runtimes.vm.storageDir`):
 *   images/<name>            base images registered by name (a disk file, or an image folder)
 *   replicas/<domain>/       one folder per replica: root.qcow2, <disk>.qcow2, seed.iso, console.log
 *   pools/<pool>/<domain>/   data disks that name a pool other than the default
 *
 * An image folder holds `disk.qcow2` or `base.qcow2` (optional), `kernel` and `initrd.img` or
 * `initramfs.cpio.gz` (optional: direct kernel boot) and `cmdline` (optional).
 */
import { access, chmod, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { findHostTool, type HostTool, runHostTool } from "./host-tool.js";
import type { VmDiskSpec, VmRuntimeSpec } from "./vm-runtime-spec.js";

/** A base image resolved on this node. */
export interface ResolvedImage {
  /** The disk the boot overlay is backed by; absent for a kernel-only image (initramfs guest). */
  readonly disk?: { readonly path: string; readonly format: "qcow2" | "raw" };
  readonly kernel?: string;
  readonly initrd?: string;
  readonly cmdline?: string;
}

/** A disk of a replica as attached to the domain. */
export interface ReplicaDisk {
  readonly name: string;
  readonly path: string;
  readonly format: "qcow2" | "raw";
  readonly boot: boolean;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const formatOf = (path: string): "qcow2" | "raw" => (/\.qcow2$/i.test(path) ? "qcow2" : "raw");

export class VmStorage {
  private qemuImg: Promise<HostTool> | undefined;

  constructor(
    readonly root: string,
    readonly imagesDir: string = join(root, "images"),
  ) {}

  /** The folder of a replica's own files. */
  replicaDir(domain: string): string {
    return join(this.root, "replicas", domain);
  }

  /** Where the replica's serial console is written. */
  consolePath(domain: string): string {
    return join(this.replicaDir(domain), "console.log");
  }

  /** Creates the storage folders, traversable by libvirt's QEMU user (libvirt-qemu). */
  async prepare(domain: string): Promise<string> {
    const dir = this.replicaDir(domain);
    try {
      await mkdir(dir, { recursive: true });
      for (const d of [this.root, join(this.root, "replicas"), dir]) await chmod(d, 0o755);
    } catch (error) {
      throw new PersysError("STORAGE_ERROR", `cannot create the VM folder ${dir}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return dir;
  }

  /**
   * The base image of a spec: by name under the images folder (a file `<name>`, `<name>.qcow2`,
   * `<name>.raw`, `<name>.img`, or an image folder), or by absolute path. STORAGE_ERROR, not
   * retryable, when there is none.
   */
  async resolveImage(image: VmRuntimeSpec["image"]): Promise<ResolvedImage> {
    const candidates =
      image.kind === "path"
        ? [image.value]
        : ["", ".qcow2", ".raw", ".img"].map((ext) => join(this.imagesDir, `${image.value}${ext}`));
    for (const path of candidates) {
      const s = await stat(path).catch(() => undefined);
      if (!s) continue;
      if (s.isFile()) return { disk: { path, format: formatOf(path) } };
      if (s.isDirectory()) return this.imageFolder(path);
    }
    const where = image.kind === "path" ? image.value : `${this.imagesDir}/${image.value}[.qcow2|.raw|.img]`;
    throw new PersysError("STORAGE_ERROR", `base image ${image.value} is not on this node (looked for ${where})`, {
      retryable: false,
    });
  }

  private async imageFolder(dir: string): Promise<ResolvedImage> {
    const files = new Set(await readdir(dir));
    const pick = (...names: string[]) => names.find((n) => files.has(n));
    const disk = pick("disk.qcow2", "base.qcow2", "disk.raw", "disk.img");
    const kernel = pick("kernel", "vmlinuz");
    const initrd = pick("initrd.img", "initramfs.cpio.gz", "initrd");
    const cmdline = files.has("cmdline") ? (await readFile(join(dir, "cmdline"), "utf8")).trim() : undefined;
    if (!disk && !kernel) {
      throw new PersysError("STORAGE_ERROR", `image folder ${dir} has neither a disk nor a kernel`, {
        retryable: false,
      });
    }
    return {
      ...(disk ? { disk: { path: join(dir, disk), format: formatOf(disk) } } : {}),
      ...(kernel ? { kernel: join(dir, kernel) } : {}),
      ...(initrd ? { initrd: join(dir, initrd) } : {}),
      ...(cmdline ? { cmdline } : {}),
    };
  }

  /** The disks of a replica: the boot overlay (implicit `root` when the spec names none) and data disks. */
  plannedDisks(domain: string, spec: VmRuntimeSpec, image: ResolvedImage): (ReplicaDisk & { sizeGib: number })[] {
    const disks: (ReplicaDisk & { sizeGib: number })[] = [];
    const hasBoot = spec.disks.some((d) => d.boot);
    if (image.disk && !hasBoot) {
      disks.push({
        name: "root",
        path: join(this.replicaDir(domain), "root.qcow2"),
        format: "qcow2",
        boot: true,
        sizeGib: 0,
      });
    }
    for (const d of spec.disks) {
      if (d.boot && !image.disk) continue; // a kernel-only image has nothing to overlay
      disks.push({ ...d, path: this.diskPath(domain, d), format: d.boot ? "qcow2" : d.format });
    }
    return disks;
  }

  private diskPath(domain: string, d: VmDiskSpec): string {
    const ext = d.boot || d.format === "qcow2" ? "qcow2" : "raw";
    if (d.pool && d.pool !== "default") return join(this.root, "pools", d.pool, domain, `${d.name}.${ext}`);
    return join(this.replicaDir(domain), `${d.name}.${ext}`);
  }

  /**
   * Creates the disks that do not exist yet (an existing disk is kept: stop/start and a new revision
   * keep the guest's data): the boot overlay backed by the base image, blank data disks by size.
   * STORAGE_ERROR with qemu-img's words when one cannot be made.
   */
  async ensureDisks(disks: readonly (ReplicaDisk & { sizeGib: number })[], image: ResolvedImage): Promise<void> {
    this.qemuImg ??= findHostTool(["qemu-img"], "qemu-utils");
    const tool = await this.qemuImg;
    for (const d of disks) {
      if (await exists(d.path)) continue;
      const dir = d.path.slice(0, d.path.lastIndexOf("/"));
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o755);
      const args =
        d.boot && image.disk
          ? ["create", "-q", "-f", "qcow2", "-F", image.disk.format, "-b", image.disk.path, d.path]
          : ["create", "-q", "-f", d.format, d.path];
      if (d.sizeGib > 0 || !d.boot) args.push(`${Math.max(1, d.sizeGib)}G`);
      try {
        await runHostTool(tool, args, { timeoutMs: 120_000 });
      } catch (error) {
        await rm(d.path, { force: true });
        throw new PersysError("STORAGE_ERROR", `cannot create disk ${d.name}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
  }

  /** Removes every file the replica owns (its folder and its pool disks). Never touches base images. */
  async removeReplica(domain: string): Promise<void> {
    await rm(this.replicaDir(domain), { recursive: true, force: true });
    const pools = await readdir(join(this.root, "pools")).catch(() => [] as string[]);
    for (const pool of pools) await rm(join(this.root, "pools", pool, domain), { recursive: true, force: true });
  }

  /** Domains that still have a replica folder (for orphan collection). */
  async replicaFolders(): Promise<string[]> {
    return readdir(join(this.root, "replicas")).catch(() => [] as string[]);
  }
}
