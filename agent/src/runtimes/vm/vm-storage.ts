/**
 * Where a VM replica's files live and how its disks are made. Disks are libvirt storage volumes
 * (see vm-pools.ts): a base image is imported once into the base pool (by content) and never
 * written or removed; a replica's boot disk is a qcow2 overlay volume backed by it, its data disks
 * and seed are volumes of the disks pool (`<domain>_<name>`), and delete removes them with
 * `vol-delete`. The console log and the domain XML stay in the replica's folder.
 *
 * Layout under the storage root (`runtimes.vm.storageDir`):
 *   images/<name>            base images registered by name (a disk file, or an image folder)
 *   pools/base/              the base pool's target (when Persys defined it): base-<sha256>.<format>
 *   pools/disks/             the disks pool's target: <domain>_root.qcow2, <domain>_<disk>.qcow2, <domain>_seed.iso
 *   replicas/<domain>/       console.log, domain.xml (and disks of replicas made before the pools)
 *
 * An image folder holds `disk.qcow2` or `base.qcow2` (optional), `kernel` and `initrd.img` or
 * `initramfs.cpio.gz` (optional: direct kernel boot) and `cmdline` (optional).
 */
import { access, chmod, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import type { Virsh } from "./virsh.js";
import { type PoolNames, type PoolVolume, VmPools } from "./vm-pools.js";
import type { VmRuntimeSpec } from "./vm-runtime-spec.js";

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
  /** The volume (pool and name) behind `path`; absent for a disk made before the pools (a file). */
  readonly volume?: { readonly pool: string; readonly name: string };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const formatOf = (path: string): "qcow2" | "raw" => (/\.qcow2$/i.test(path) ? "qcow2" : "raw");

export class VmStorage {
  readonly pools: VmPools;

  constructor(
    readonly root: string,
    readonly imagesDir: string = join(root, "images"),
    poolNames: PoolNames = { base: "persys-base", disks: "persys-disks" },
  ) {
    this.pools = new VmPools(poolNames, root);
  }

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

  /**
   * The image with its disk replaced by the base pool's copy (imported once by content): what
   * overlays are backed by. A kernel-only image is returned as it is.
   */
  async importImage(virsh: Virsh, image: ResolvedImage): Promise<ResolvedImage & { base?: PoolVolume }> {
    if (!image.disk) return image;
    const base = await this.pools.importBase(virsh, image.disk);
    return { ...image, disk: { path: base.path, format: base.format }, base };
  }

  /**
   * The disks of a replica: the boot overlay (implicit `root` when the spec names none) and data
   * disks, as volumes of the disks pool (or the pool a data disk names). A disk made before the
   * pools (a file in the replica folder) is kept where it is.
   */
  async plannedDisks(
    virsh: Virsh,
    domain: string,
    spec: VmRuntimeSpec,
    image: ResolvedImage,
  ): Promise<(ReplicaDisk & { sizeGib: number })[]> {
    const wanted: { name: string; format: "qcow2" | "raw"; boot: boolean; sizeGib: number; pool?: string }[] = [];
    const hasBoot = spec.disks.some((d) => d.boot);
    if (image.disk && !hasBoot) wanted.push({ name: "root", format: "qcow2", boot: true, sizeGib: 0 });
    for (const d of spec.disks) {
      if (d.boot && !image.disk) continue; // a kernel-only image has nothing to overlay
      wanted.push({
        name: d.name,
        format: d.boot ? "qcow2" : d.format,
        boot: d.boot,
        sizeGib: d.sizeGib,
        pool: d.pool,
      });
    }
    const disks: (ReplicaDisk & { sizeGib: number })[] = [];
    for (const w of wanted) {
      const file = `${w.name}.${w.format === "qcow2" ? "qcow2" : "raw"}`;
      const legacy = join(this.replicaDir(domain), file);
      const base = { name: w.name, format: w.format, boot: w.boot, sizeGib: w.sizeGib };
      if (await exists(legacy)) {
        disks.push({ ...base, path: legacy });
        continue;
      }
      const pool = w.boot ? this.pools.names.disks : this.pools.poolOf(w.pool);
      const name = VmPools.volumeName(domain, file);
      disks.push({ ...base, path: await this.pools.pathOf(virsh, pool, name), volume: { pool, name } });
    }
    return disks;
  }

  /**
   * Creates the disk volumes that do not exist yet (an existing disk is kept: stop/start and a new
   * revision keep the guest's data): the boot overlay backed by the base volume, blank data disks
   * by size. STORAGE_ERROR with libvirt's words when one cannot be made.
   */
  async ensureDisks(
    virsh: Virsh,
    disks: readonly (ReplicaDisk & { sizeGib: number })[],
    image: ResolvedImage & { base?: PoolVolume },
  ): Promise<void> {
    for (const d of disks) {
      if (!d.volume || (await exists(d.path))) continue;
      try {
        if (d.boot && image.base) {
          await this.pools.createOverlay(virsh, d.volume.name, image.base, d.sizeGib * 2 ** 30);
        } else {
          await this.pools.createBlank(virsh, d.volume.pool, d.volume.name, Math.max(1, d.sizeGib), d.format);
        }
      } catch (error) {
        if (error instanceof PersysError && error.code === "RUNTIME_UNAVAILABLE") throw error;
        throw new PersysError("STORAGE_ERROR", `cannot create disk ${d.name}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
  }

  /** Where the replica's NoCloud seed is built (a volume of the disks pool once `seedWritten`). */
  async seedPath(virsh: Virsh, domain: string): Promise<string> {
    return this.pools.pathOf(virsh, this.pools.names.disks, VmPools.volumeName(domain, "seed.iso"));
  }

  /** The seed was (re)written into the disks pool's folder: let libvirt see it as a volume. */
  async seedWritten(virsh: Virsh): Promise<void> {
    await this.pools.refresh(virsh, this.pools.names.disks);
  }

  /**
   * Removes every volume and file the replica owns: `vol-delete` of its volumes in the disks pool
   * and of `extraVolumes` (data disks in other pools, from its domain XML), then its folder. Never
   * touches the base pool.
   */
  async removeReplica(virsh: Virsh, domain: string, extraVolumes: readonly string[] = []): Promise<void> {
    const pools = this.pools;
    await pools.ensure(virsh);
    const prefix = VmPools.volumeName(domain, "");
    for (const v of await pools.volumes(virsh, pools.names.disks)) {
      if (v.name.startsWith(prefix)) await pools.deleteVolume(virsh, pools.names.disks, v.name);
    }
    for (const path of extraVolumes) {
      const base = await pools.targetOf(virsh, pools.names.base);
      if (path.startsWith(`${base}/`)) continue;
      await virsh.run(`vol-delete ${path}`, ["vol-delete", path]).catch((error: unknown) => {
        if (!(error instanceof PersysError && error.code === "NOT_FOUND")) throw error;
      });
    }
    await rm(this.replicaDir(domain), { recursive: true, force: true });
    // Data disks of the layout before the pools (pools/<pool>/<domain>/ folders).
    const legacy = await readdir(join(this.root, "pools")).catch(() => [] as string[]);
    for (const pool of legacy) await rm(join(this.root, "pools", pool, domain), { recursive: true, force: true });
  }

  /** Domains of this node that still have a replica folder or a disks-pool volume (orphan collection). */
  async replicaFolders(virsh: Virsh, nodeSuffix: string): Promise<string[]> {
    const found = new Set(await readdir(join(this.root, "replicas")).catch(() => [] as string[]));
    await this.pools.ensure(virsh);
    for (const v of await this.pools.volumes(virsh, this.pools.names.disks)) {
      const domain = VmPools.domainOfVolume(v.name, nodeSuffix);
      if (domain) found.add(domain);
    }
    return [...found];
  }
}
