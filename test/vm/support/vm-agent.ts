/**
 * A real control plane with one agent whose VM runtime talks to the test libvirtd (TCG guests),
 * storage under a folder libvirt's QEMU user can traverse. Fails loudly when libvirt or the guest
 * fixtures are missing (see vm-test-host.ts).
 */
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NodeAgent } from "@persys/agent";
import { type DockerHarness, startDockerHarness } from "../../agent/support/agent-harness.js";
import type { AgentProcess } from "../../agent/support/agent-process.js";
import { runDir } from "../../support/services.js";
import { fastGuest, libvirtUri, testNetwork, virsh } from "../vm-test-host.js";

export interface VmHarness extends DockerHarness {
  readonly agent: NodeAgent;
  /** The agent's VM storage root (`replicas/<domain>/...`). */
  readonly storageDir: string;
  /** Domain name of a replica on the agent's node. */
  domain(replicaName: string): string;
}

/** The libvirt storage pools of a test node (named per node: tests share one libvirtd). */
export function testPools(nodeId: string): { base: string; disks: string } {
  return { base: `persys-test-base-${nodeId}`, disks: `persys-test-disks-${nodeId}` };
}

/** The agent flags that enable the VM runtime on the test libvirtd with storage in `storageDir`. */
async function vmFlags(storageDir: string, nodeId: string): Promise<Record<string, string>> {
  const guest = await fastGuest();
  const pools = testPools(nodeId);
  return {
    "runtimes-vm-enabled": "true",
    "runtimes-vm-uri": libvirtUri(),
    "runtimes-vm-storage-dir": storageDir,
    "runtimes-vm-pools-base": pools.base,
    "runtimes-vm-pools-disks": pools.disks,
    "runtimes-vm-default-network": testNetwork(),
    "runtimes-vm-probe-kernel": guest.kernel,
    "runtimes-vm-probe-initrd": guest.initrd,
  };
}

async function vmStorageDir(): Promise<string> {
  await virsh("version"); // libvirtd must answer: fail, never skip
  const storageDir = await mkdtemp("/tmp/persys-vm-agent-");
  await chmod(storageDir, 0o755);
  return storageDir;
}

/** Destroys and undefines every domain and storage pool of a node (a test's leftovers), then removes its storage. */
async function removeNodeDomains(nodeId: string, storageDir: string): Promise<void> {
  for (const name of (await virsh("list", "--all", "--name")).split("\n").map((l) => l.trim())) {
    if (!name.endsWith(`.${nodeId}`)) continue;
    await virsh("destroy", name).catch(() => undefined);
    await virsh("undefine", name).catch(() => undefined);
  }
  for (const pool of Object.values(testPools(nodeId))) {
    await virsh("pool-destroy", pool).catch(() => undefined);
    await virsh("pool-undefine", pool).catch(() => undefined);
  }
  await rm(storageDir, { recursive: true, force: true });
}

export async function startVmHarness(flags: Record<string, string> = {}): Promise<VmHarness> {
  const storageDir = await vmStorageDir();
  const h = await startDockerHarness();
  try {
    const agent = await h.addAgent("vm", { ...(await vmFlags(storageDir, h.nodeId("vm"))), ...flags });
    return {
      ...h,
      agent,
      storageDir,
      domain: (replicaName) => `${replicaName}.${agent.nodeId}`,
      async close() {
        await h.close();
        await removeNodeDomains(agent.nodeId, storageDir);
      },
    };
  } catch (error) {
    await h.close();
    await rm(storageDir, { recursive: true, force: true });
    throw error;
  }
}

/** A VM agent as a `persys-agent` child process (for SIGKILL and restart), its node and storage fixed. */
export interface VmProcessHarness extends DockerHarness {
  readonly node: string;
  readonly storageDir: string;
  readonly stateDir: string;
  /** Starts the agent process (again: same node id, state and storage). */
  spawn(): Promise<AgentProcess>;
  domain(replicaName: string): string;
}

export async function startVmProcessHarness(flags: Record<string, string> = {}): Promise<VmProcessHarness> {
  const storageDir = await vmStorageDir();
  const stateDir = await mkdtemp(join(runDir(), "agent-vm-"));
  const h = await startDockerHarness();
  const node = h.nodeId("vmproc");
  const all = { ...(await vmFlags(storageDir, node)), "state-dir": stateDir, ...flags };
  return {
    ...h,
    node,
    storageDir,
    stateDir,
    spawn: () => h.spawnAgent("vmproc", all),
    domain: (replicaName) => `${replicaName}.${node}`,
    async close() {
      await h.close();
      await removeNodeDomains(node, storageDir);
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** A workload's log lines through the REST API (NDJSON), as a user reads them. */
export async function apiLogLines(h: DockerHarness, workloadId: string): Promise<string[]> {
  const res = await fetch(`${h.httpUrl}/v1/workloads/${workloadId}/logs`);
  if (res.status !== 200) return [];
  return (await res.text())
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { line?: string }).line ?? "");
}

export { join };

/**
 * Registers the fast guest by name in the agent's image folder (kernel, initramfs, cmdline), as an
 * operator would; `kernel` replaces the guest's kernel (e.g. with a broken one). Returns the folder.
 */
export async function registerFastGuest(
  storageDir: string,
  name: string,
  cmdline: string,
  options: { kernel?: string } = {},
): Promise<string> {
  const guest = await fastGuest();
  const image = join(storageDir, "images", name);
  await mkdir(image, { recursive: true });
  await symlink(options.kernel ?? guest.kernel, join(image, "kernel"));
  await symlink(guest.initrd, join(image, "initramfs.cpio.gz"));
  await writeFile(join(image, "cmdline"), `${cmdline}\n`);
  return image;
}

/** How many lines of a workload's console (through the logs API) contain `text`. */
export async function consoleCount(h: DockerHarness, workloadId: string, text: string): Promise<number> {
  return (await apiLogLines(h, workloadId)).filter((l) => l.includes(text)).length;
}
