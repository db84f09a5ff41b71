import { readFileSync, statfsSync } from "node:fs";
import { cpus, freemem, totalmem } from "node:os";

/** Amounts in the scheduler's units. */
export interface NodeResources {
  readonly cpuMillicores: number;
  readonly memoryMib: number;
  readonly diskGib: number;
}

/** Space of the file system holding `path`, or undefined when it cannot be read. */
export function diskOf(path: string): { totalBytes: number; freeBytes: number } | undefined {
  try {
    const s = statfsSync(path);
    return { totalBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize };
  } catch {
    return undefined;
  }
}

/** The host's totals: CPUs × 1000 millicores, RAM in MiB, the file system of `diskPath` in GiB. */
export function measureCapacity(diskPath: string): NodeResources {
  const disk = diskOf(diskPath);
  return {
    cpuMillicores: Math.max(1, cpus().length) * 1000,
    memoryMib: Math.floor(totalmem() / 1_048_576),
    diskGib: disk ? Math.floor(disk.totalBytes / 1_073_741_824) : 0,
  };
}

type Partial3 = { cpuMillicores?: number | undefined; memoryMib?: number | undefined; diskGib?: number | undefined };

/**
 * Capacity and allocatable as reported: each dimension of `capacity` is the configured value or the
 * measured one; allocatable is the configured value or capacity minus the system reserve (never
 * below zero, never above capacity).
 */
export function reportedResources(
  measured: NodeResources,
  configured: { capacity: Partial3; allocatable: Partial3; reserve: NodeResources },
): { capacity: NodeResources; allocatable: NodeResources } {
  const capacity: NodeResources = {
    cpuMillicores: configured.capacity.cpuMillicores ?? measured.cpuMillicores,
    memoryMib: configured.capacity.memoryMib ?? measured.memoryMib,
    diskGib: configured.capacity.diskGib ?? measured.diskGib,
  };
  const derive = (dim: keyof NodeResources) =>
    Math.min(capacity[dim], configured.allocatable[dim] ?? Math.max(0, capacity[dim] - configured.reserve[dim]));
  return {
    capacity,
    allocatable: { cpuMillicores: derive("cpuMillicores"), memoryMib: derive("memoryMib"), diskGib: derive("diskGib") },
  };
}

/** Memory in use: total minus what the kernel says is available (MemAvailable), else minus free. */
function memoryUsedBytes(): number {
  try {
    const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
    if (match) return totalmem() - Number(match[1]) * 1024;
  } catch {
    // not Linux
  }
  return totalmem() - freemem();
}

/** Measured use of the whole host, with utilisation percentages. */
export interface HostUsage extends NodeResources {
  readonly cpuPercent: number;
  readonly memoryPercent: number;
  readonly diskPercent: number;
}

/**
 * Samples the host's CPU (busy share of all cores since the previous sample), memory and disk use.
 * The first sample reports CPU since boot.
 */
export class HostUsageSampler {
  private last = this.cpuTimes();

  constructor(private readonly diskPath: string) {}

  private cpuTimes(): { busy: number; total: number } {
    let busy = 0;
    let total = 0;
    for (const c of cpus()) {
      const t = c.times;
      const all = t.user + t.nice + t.sys + t.idle + t.irq;
      total += all;
      busy += all - t.idle;
    }
    return { busy, total };
  }

  sample(): HostUsage {
    const now = this.cpuTimes();
    const dBusy = now.busy - this.last.busy;
    const dTotal = now.total - this.last.total;
    this.last = now;
    const share = dTotal > 0 ? dBusy / dTotal : 0;
    const cores = Math.max(1, cpus().length);
    const memory = memoryUsedBytes();
    const disk = diskOf(this.diskPath);
    const diskUsed = disk ? disk.totalBytes - disk.freeBytes : 0;
    return {
      cpuMillicores: Math.round(share * cores * 1000),
      memoryMib: Math.round(memory / 1_048_576),
      diskGib: Math.round(diskUsed / 1_073_741_824),
      cpuPercent: share * 100,
      memoryPercent: (memory / totalmem()) * 100,
      diskPercent: disk && disk.totalBytes > 0 ? (diskUsed / disk.totalBytes) * 100 : 0,
    };
  }
}
