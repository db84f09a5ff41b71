/**
 * The libvirt storage pools of a node's VM disks: two `dir` pools, defined, built, started and set
 * to autostart on first use (idempotent; a pool already defined is used where its target is):
 *
 * - the **base pool** (`persys-base`): base images, imported once by content (`base-<sha256
 *   prefix>.<format>`), never written (they back overlays) and never deleted by Persys;
 * - the **disks pool** (`persys-disks`): what a replica owns — boot overlays, blank data disks and
 *   NoCloud seeds, named `<domain>_<name>` — created as volumes and deleted with `vol-delete`.
 *
 * ```ts
 * const pools = new VmPools({ base: "persys-base", disks: "persys-disks" }, "/var/lib/persys-agent/vm");
 * const base = await pools.importBase(virsh, { path: "/srv/images/debian.qcow2", format: "qcow2" });
 * await pools.createOverlay(virsh, "web-0.n1_root.qcow2", base, 10 * 2 ** 30);
 * ```
 */

import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { PersysError } from "@persys/schema";
import type { Virsh } from "./virsh.js";

export interface PoolNames {
  /** Base images (imported once, kept). */
  readonly base: string;
  /** Overlays, data disks and seeds of replicas. */
  readonly disks: string;
}

/** A volume in a pool: its pool, name and file. */
export interface PoolVolume {
  readonly pool: string;
  readonly name: string;
  readonly path: string;
  readonly format: "qcow2" | "raw";
}

/** The separator between a domain and a disk in a volume name (`web-0.n1_root.qcow2`). */
export const VOLUME_SEPARATOR = "_";

const storageError = (message: string, cause?: unknown, retryable = true) =>
  new PersysError("STORAGE_ERROR", message, { ...(cause ? { cause } : {}), retryable });

/** Parses `virsh vol-list <pool>` rows (` name   path`) into names. */
export function parseVolList(text: string): { name: string; path: string }[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^Name\s+Path$/.test(l) && !/^-+$/.test(l))
    .map((l) => {
      const m = /^(\S+)\s+(\/.*)$/.exec(l);
      return m ? { name: m[1] ?? "", path: m[2] ?? "" } : undefined;
    })
    .filter((v): v is { name: string; path: string } => v !== undefined);
}

export class VmPools {
  private ready: Promise<void> | undefined;
  private readonly targets = new Map<string, string>();
  /** sha256 of source files by `path|size|mtime` (hashing a base image once per agent run). */
  private readonly hashes = new Map<string, string>();

  constructor(
    readonly names: PoolNames,
    /** The agent's VM storage root: new pools get `<root>/pools/<base|disks>` as targets. */
    private readonly root: string,
  ) {}

  /** Defines, builds, starts and autostarts the base and disks pools when they are not yet. */
  ensure(virsh: Virsh): Promise<void> {
    this.ready ??= (async () => {
      await this.ensurePool(virsh, this.names.base, join(this.root, "pools", "base"));
      await this.ensurePool(virsh, this.names.disks, join(this.root, "pools", "disks"));
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async ensurePool(virsh: Virsh, name: string, target: string): Promise<void> {
    try {
      let info = await this.info(virsh, name);
      if (!info) {
        await mkdir(join(target, ".."), { recursive: true });
        await chmod(this.root, 0o755).catch(() => {});
        await virsh.run(`pool-define-as ${name}`, ["pool-define-as", name, "dir", "--target", target]);
        await virsh.run(`pool-build ${name}`, ["pool-build", name]);
        info = await this.info(virsh, name);
      }
      if (info && !/^State:\s+running/m.test(info)) await virsh.run(`pool-start ${name}`, ["pool-start", name]);
      if (info && !/^Autostart:\s+yes/m.test(info)) {
        await virsh.run(`pool-autostart ${name}`, ["pool-autostart", name]).catch(() => {});
      }
      await this.targetOf(virsh, name);
    } catch (error) {
      if (error instanceof PersysError && error.code === "RUNTIME_UNAVAILABLE") throw error;
      throw storageError(`cannot set up the storage pool ${name}: ${(error as Error).message}`, error);
    }
  }

  /** `virsh pool-info` text, or undefined when there is no such pool. */
  private async info(virsh: Virsh, name: string): Promise<string | undefined> {
    try {
      return await virsh.run(`pool-info ${name}`, ["pool-info", name], 15_000);
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }

  /** The target folder of a pool (STORAGE_ERROR, not retryable, when it is not defined here). */
  async targetOf(virsh: Virsh, pool: string): Promise<string> {
    const known = this.targets.get(pool);
    if (known) return known;
    let xml: string;
    try {
      xml = await virsh.run(`pool-dumpxml ${pool}`, ["pool-dumpxml", pool], 15_000);
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") {
        throw storageError(`storage pool ${pool} is not defined on this node`, error, false);
      }
      throw error;
    }
    const path = /<target>\s*<path>([^<]+)<\/path>/.exec(xml)?.[1];
    if (!path) throw storageError(`storage pool ${pool} has no target folder (not a dir pool?)`, undefined, false);
    this.targets.set(pool, path);
    return path;
  }

  private async sha256(path: string): Promise<string> {
    const s = await stat(path);
    const key = `${path}|${s.size}|${s.mtimeMs}`;
    const known = this.hashes.get(key);
    if (known) return known;
    const hash = createHash("sha256");
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    const hex = hash.digest("hex");
    this.hashes.set(key, hex);
    return hex;
  }

  /**
   * The base pool's copy of a base image, imported when the pool has none with the same content
   * (`base-<first 16 hex digits of its sha256>.<format>`): copied beside the pool, renamed into it
   * (so a half-copied file is never a volume), then `pool-refresh`. Never writes the source.
   */
  async importBase(virsh: Virsh, source: { path: string; format: "qcow2" | "raw" }): Promise<PoolVolume> {
    await this.ensure(virsh);
    const pool = this.names.base;
    const target = await this.targetOf(virsh, pool);
    let hash: string;
    try {
      hash = await this.sha256(source.path);
    } catch (error) {
      throw storageError(`cannot read base image ${source.path}: ${(error as Error).message}`, error, false);
    }
    const name = `base-${hash.slice(0, 16)}.${source.format}`;
    const path = join(target, name);
    const present = await stat(path).then(
      () => true,
      () => false,
    );
    if (!present) {
      const scratch = join(this.root, "tmp");
      const partial = join(scratch, `${name}.${randomBytes(4).toString("hex")}.partial`);
      try {
        await mkdir(scratch, { recursive: true });
        await copyFile(source.path, partial);
        await chmod(partial, 0o644);
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw storageError(
          `cannot import base image ${source.path} into pool ${pool}: ${(error as Error).message}`,
          error,
        );
      }
      await virsh.run(`pool-refresh ${pool}`, ["pool-refresh", pool]);
    }
    return { pool, name, path, format: source.format };
  }

  /** Capacity of a volume in bytes (`vol-info --bytes`). */
  async capacity(virsh: Virsh, path: string): Promise<number> {
    const out = await virsh.run(`vol-info ${path}`, ["vol-info", "--bytes", path], 15_000);
    return Number(/^Capacity:\s+(\d+)/m.exec(out)?.[1] ?? 0);
  }

  /** The pool of a data disk: the disks pool for "" and "default", else the named libvirt pool. */
  poolOf(requested: string | undefined): string {
    return !requested || requested === "default" ? this.names.disks : requested;
  }

  /** Path a volume of `pool` named `name` has (the pool's target folder + name). */
  async pathOf(virsh: Virsh, pool: string, name: string): Promise<string> {
    await this.ensure(virsh);
    return join(await this.targetOf(virsh, pool), name);
  }

  /** A qcow2 overlay volume backed by `base`, at least as large as the base (`capacityBytes` when more). */
  async createOverlay(virsh: Virsh, name: string, base: PoolVolume, capacityBytes: number): Promise<void> {
    const size = Math.max(capacityBytes, await this.capacity(virsh, base.path));
    await virsh.run(`vol-create-as ${name}`, [
      "vol-create-as",
      this.names.disks,
      name,
      String(size),
      "--format",
      "qcow2",
      "--backing-vol",
      base.path,
      "--backing-vol-format",
      base.format,
    ]);
  }

  /** A blank volume of `sizeGib` GiB. */
  async createBlank(virsh: Virsh, pool: string, name: string, sizeGib: number, format: "qcow2" | "raw"): Promise<void> {
    await virsh.run(`vol-create-as ${name}`, ["vol-create-as", pool, name, `${sizeGib}G`, "--format", format]);
  }

  /** Makes libvirt see files written into a pool's folder (a seed). */
  async refresh(virsh: Virsh, pool: string): Promise<void> {
    await virsh.run(`pool-refresh ${pool}`, ["pool-refresh", pool]);
  }

  /** Volumes of a pool. */
  async volumes(virsh: Virsh, pool: string): Promise<{ name: string; path: string }[]> {
    return parseVolList(await virsh.run(`vol-list ${pool}`, ["vol-list", pool], 15_000));
  }

  /** Deletes a volume (a missing one is fine). Refuses the base pool: base images are kept. */
  async deleteVolume(virsh: Virsh, pool: string, name: string): Promise<void> {
    if (pool === this.names.base) throw new PersysError("INTERNAL", `refusing to delete base image volume ${name}`);
    try {
      await virsh.run(`vol-delete ${name}`, ["vol-delete", "--pool", pool, name]);
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") return;
      throw error;
    }
  }

  /** The domain a disks-pool volume belongs to (`<domain>_<disk>`), given the node's domain suffix. */
  static domainOfVolume(volume: string, nodeSuffix: string): string | undefined {
    const at = volume.indexOf(`${nodeSuffix}${VOLUME_SEPARATOR}`);
    return at > 0 ? volume.slice(0, at + nodeSuffix.length) : undefined;
  }

  /** The volume name of a replica's disk or seed. */
  static volumeName(domain: string, file: string): string {
    return `${domain}${VOLUME_SEPARATOR}${basename(file)}`;
  }
}
