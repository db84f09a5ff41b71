/**
 * The VM driver: VM replicas as libvirt domains (through virsh), disks as qcow2 overlays on a base
 * image, a NoCloud seed, the serial console in a log file. Status comes from libvirt's lifecycle
 * events (plus a poll for DHCP leases and usage); a stop the agent did not ask for is reported typed
 * (VM_CRASHED / VM_BOOT_FAILED with the console tail) and the VM is started again with backoff.
 */
import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { type DesiredReplica, runtimeRevision, type VmReplica } from "../../replicas/desired-replica.js";
import type { ReplicaDriver, ReplicaDriverContext } from "../../replicas/replica-driver.js";
import type { ReplicaEntry } from "../../replicas/replica-entry.js";
import type { ObservedReason } from "../docker/container-state.js";
import { buildSeedIso } from "./cloud-init-seed.js";
import { type Accelerator, buildDomainXml, parseReplicaMetadata } from "./domain-xml.js";
import { type DomainState, Virsh } from "./virsh.js";
import { domainNameOf, domainSpecOf, plannedNetworks } from "./vm-domain-plan.js";
import { type DomainEvent, VmEventStream } from "./vm-events.js";
import type { VmStorage } from "./vm-storage.js";

export interface VmDriverOptions {
  readonly uri: string;
  readonly storage: VmStorage;
  /** The libvirt network of a NIC that names none. */
  readonly defaultNetwork: string;
  /** Whether KVM proved to boot guests on this node (the accelerator probe), and why (not). */
  readonly kvm: () => { readonly ok: boolean; readonly reason: string };
  /** DHCP leases and usage are read this often. */
  readonly pollIntervalMs: number;
  /** A Persys domain of this node with no desired replica is removed after this long. */
  readonly orphanGraceMs: number;
  readonly gcIntervalMs: number;
  /** How long a guest has to reboot on an ACPI reboot request before it is reset. */
  readonly rebootTimeoutMs: number;
  /** libvirt became (un)reachable. */
  readonly onReadyChange?: (ready: boolean) => void;
}

const CONSOLE_TAIL_LINES = 15;

function vmReplica(d: DesiredReplica): VmReplica {
  if (d.kind !== "vm") throw new PersysError("INTERNAL", `replica ${d.id} is a ${d.kind}, not a vm`);
  return d;
}

const reasonOf = (e: unknown): ObservedReason => {
  const p = e instanceof PersysError ? e : new PersysError("RUNTIME_ERROR", String(e));
  return { code: p.code, message: p.message, retryable: p.retryable };
};

/** Source files of a domain's disks (`<source file='…'/>` of `<disk type='file'>`), seed included. */
export function diskSourcesOf(xml: string): string[] {
  return [...xml.matchAll(/<disk type='file'[\s\S]*?<source file='([^']+)'/g)].map((m) => m[1] ?? "").filter(Boolean);
}

/** The last lines of a console log, CR-free, for a failure reason. */
export async function consoleTail(path: string, lines = CONSOLE_TAIL_LINES): Promise<string> {
  try {
    const f = await open(path, "r");
    try {
      const { size } = await f.stat();
      const length = Math.min(size, 16_384);
      const buf = Buffer.alloc(length);
      await f.read(buf, 0, length, size - length);
      return buf
        .toString("utf8")
        .replace(/\r/g, "")
        .split("\n")
        .map((l) => l.trimEnd())
        .filter(Boolean)
        .slice(-lines)
        .join("\n");
    } finally {
      await f.close();
    }
  } catch {
    return "";
  }
}

export class VmDriver implements ReplicaDriver {
  readonly kind = "vm" as const;
  private virsh: Virsh | undefined;
  private unready: ObservedReason | undefined = {
    code: "RUNTIME_UNAVAILABLE",
    message: "libvirt has not been checked yet",
    retryable: true,
  };
  private readonly entries = new Map<string, ReplicaEntry>();
  private readonly cpu = new Map<string, { ns: number; at: number }>();
  private readonly orphanSince = new Map<string, number>();
  /** Waiters for the next `reboot` event of a domain (in-place reboots). */
  private readonly rebootWaiters = new Map<string, Set<() => void>>();
  private events: VmEventStream | undefined;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(
    private readonly ctx: ReplicaDriverContext,
    private readonly o: VmDriverOptions,
  ) {}

  /** Connects to libvirt (retried every 5 s while it does not answer), then streams events. */
  async start(): Promise<void> {
    await this.check();
    const poll = setInterval(() => void this.poll().catch(() => {}), this.o.pollIntervalMs);
    const gc = setInterval(() => void this.collectOrphans().catch(() => {}), this.o.gcIntervalMs);
    const health = setInterval(() => void this.check(), 5_000);
    for (const t of [poll, gc, health]) t.unref();
    this.timers.push(poll, gc, health);
  }

  private async check(): Promise<void> {
    if (this.closed) return;
    const was = this.unready === undefined;
    try {
      this.virsh ??= await Virsh.find(this.o.uri);
      await this.virsh.version();
      this.unready = undefined;
      if (!this.events) {
        this.events = new VmEventStream(
          this.virsh,
          (ev) => this.onDomainEvent(ev),
          () => this.refreshAll(),
        );
        this.events.start();
      }
    } catch (error) {
      const e = error instanceof PersysError ? error : new PersysError("RUNTIME_UNAVAILABLE", String(error));
      this.unready = {
        code: "RUNTIME_UNAVAILABLE",
        message: `the VM runtime is unavailable: ${e.message} (libvirt URI ${this.o.uri})`,
        retryable: true,
      };
    }
    const now = this.unready === undefined;
    if (was !== now) this.o.onReadyChange?.(now);
  }

  notReady(): ObservedReason | undefined {
    return this.unready;
  }

  /** The console log of a VM replica by its request id (for the logs API). */
  consoleOf(replicaId: string): string {
    return this.o.storage.consolePath(domainNameOf(replicaId, this.ctx.nodeId));
  }

  private domainOf(d: DesiredReplica): string {
    return domainNameOf(d.id, this.ctx.nodeId);
  }

  private conn(): Virsh {
    if (!this.virsh || this.unready) {
      throw new PersysError("RUNTIME_UNAVAILABLE", this.unready?.message ?? "libvirt is not connected");
    }
    return this.virsh;
  }

  private accelOf(d: VmReplica): Accelerator {
    const kvm = this.o.kvm();
    if (d.spec.accel === "tcg") return "tcg";
    if (d.spec.accel === "kvm" && !kvm.ok) {
      throw new PersysError("RUNTIME_UNAVAILABLE", `KVM does not boot guests on this node: ${kvm.reason}`, {
        retryable: false,
      });
    }
    return kvm.ok ? "kvm" : "tcg";
  }

  async converge(e: ReplicaEntry, _mode: "apply" | "adopt"): Promise<void> {
    const d = vmReplica(e.desired);
    if (d.desired === "deleted") return this.teardown(e);
    e.cancelRestart();
    const domain = this.domainOf(d);
    this.entries.set(domain, e);
    const action = this.ctx.actions.begin("apply", d.id);
    action.start();
    try {
      const virsh = this.conn();
      let state = await virsh.state(domain);
      if (state) {
        const meta = parseReplicaMetadata(await virsh.xml(domain, true));
        if (!meta || runtimeRevision(meta.revision) !== runtimeRevision(d.revision) || e.recreate) {
          await this.powerOff(virsh, domain, d.spec.stopTimeoutSeconds);
          await virsh.undefine(domain);
          state = undefined;
        }
      }
      e.recreate = false;
      if (!state) {
        await this.define(virsh, d, domain);
        state = await virsh.state(domain);
      }
      e.lastError = undefined;
      const running = state?.state === "running" || state?.state === "paused" || state?.state === "idle";
      if (d.desired === "running" && !running) await this.startDomain(virsh, e, domain);
      else if (d.desired === "stopped" && running) await this.powerOff(virsh, domain, d.spec.stopTimeoutSeconds);
      action.done();
    } catch (error) {
      e.lastError = reasonOf(error);
      action.done(e.lastError.message);
      this.ctx.logger.warn({ replica: d.id, code: e.lastError.code, err: e.lastError.message }, "VM apply failed");
    }
    await this.refresh(e);
  }

  /** Resolves the image, makes disks and seed, writes the domain XML and defines it. */
  private async define(virsh: Virsh, d: VmReplica, domain: string): Promise<void> {
    const storage = this.o.storage;
    const accel = this.accelOf(d);
    const image = await storage.importImage(virsh, await storage.resolveImage(d.spec.image));
    const dir = await storage.prepare(domain);
    const disks = await storage.plannedDisks(virsh, domain, d.spec, image);
    await storage.ensureDisks(virsh, disks, image);
    let seedPath: string | undefined;
    if (d.spec.cloudInit) {
      seedPath = await storage.seedPath(virsh, domain);
      const ci = d.spec.cloudInit;
      await buildSeedIso(
        {
          instanceId: `${d.id}-${d.revision.slice(0, 12)}`,
          hostname: d.id
            .toLowerCase()
            .replace(/[^a-z0-9-]/g, "-")
            .slice(0, 63),
          userData: ci.userData,
          ...(ci.metaData ? { metaData: ci.metaData } : {}),
          ...(ci.networkConfig ? { networkConfig: ci.networkConfig } : {}),
        },
        seedPath,
      );
      await storage.seedWritten(virsh);
    }
    const networks = plannedNetworks(d, this.ctx.nodeId, this.o.defaultNetwork);
    const xml = buildDomainXml(
      domainSpecOf({
        replica: d,
        nodeId: this.ctx.nodeId,
        domain,
        accel,
        image,
        disks,
        networks,
        ...(seedPath ? { seedPath } : {}),
        consolePath: storage.consolePath(domain),
      }),
    );
    const xmlPath = join(dir, "domain.xml");
    await writeFile(xmlPath, xml);
    await virsh.define(xmlPath);
    this.ctx.logger.info({ replica: d.id, domain, accel }, "VM domain defined");
  }

  private async startDomain(virsh: Virsh, e: ReplicaEntry, domain: string): Promise<void> {
    try {
      await virsh.start(domain);
      e.observed.startedAt = new Date(this.ctx.clock());
    } catch (error) {
      if (error instanceof PersysError && error.code === "CONFLICT") return; // already running
      if (error instanceof PersysError && error.code === "RUNTIME_UNAVAILABLE") throw error;
      const tail = await consoleTail(this.o.storage.consolePath(domain));
      throw new PersysError(
        "VM_BOOT_FAILED",
        `VM ${domain} did not start: ${(error as Error).message}${tail ? `\nconsole:\n${tail}` : ""}`,
        { cause: error },
      );
    }
  }

  /** ACPI shutdown, waiting up to `timeoutSeconds` for the guest to power off, then destroy. */
  private async powerOff(virsh: Virsh, domain: string, timeoutSeconds: number): Promise<void> {
    const running = async () => {
      const s = await virsh.state(domain);
      return s !== undefined && s.state !== "shut off" && s.state !== "crashed";
    };
    if (!(await running())) return;
    await virsh.shutdown(domain).catch(() => {});
    const deadline = this.ctx.clock() + timeoutSeconds * 1000;
    while (this.ctx.clock() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      if (!(await running())) return;
    }
    this.ctx.logger.info({ domain, timeoutSeconds }, "VM did not power off on ACPI shutdown; destroying it");
    await virsh.destroy(domain).catch((error: unknown) => {
      if (!(error instanceof PersysError && error.code === "CONFLICT")) throw error;
    });
  }

  /**
   * Reboots the guest in place: an ACPI reboot request (`virsh reboot --mode acpi`; libvirt resets
   * the guest in the same QEMU process once it powers off), and when no `reboot` event came within
   * `rebootTimeoutMs` — the guest ignores ACPI or hangs in its shutdown — a reset (`virsh reset`).
   * Same domain, QEMU process and disks. A VM that is not running is converged (started) instead.
   */
  async reboot(e: ReplicaEntry): Promise<void> {
    const d = vmReplica(e.desired);
    const domain = this.domainOf(d);
    this.entries.set(domain, e);
    let state: DomainState | undefined;
    try {
      state = await this.conn().state(domain);
    } catch {
      state = undefined;
    }
    if (state?.state !== "running") {
      e.observed.observedRevision = d.revision;
      return this.converge(e, "apply");
    }
    e.cancelRestart();
    const action = this.ctx.actions.begin("reboot", d.id);
    action.start();
    try {
      const how = await this.rebootDomain(this.conn(), domain);
      e.observed.observedRevision = d.revision;
      e.observed.startedAt = new Date(this.ctx.clock());
      e.lastError = undefined;
      action.done();
      this.ctx.logger.info({ replica: d.id, domain, how }, "VM rebooted in place");
    } catch (error) {
      e.lastError = reasonOf(error);
      action.done(e.lastError.message);
      this.ctx.logger.warn({ replica: d.id, code: e.lastError.code, err: e.lastError.message }, "VM reboot failed");
    }
    await this.refresh(e);
  }

  /** ACPI reboot, then a reset when the guest did not reboot in time; resolves with which it took. */
  private async rebootDomain(virsh: Virsh, domain: string): Promise<"acpi" | "reset"> {
    const rebooted = this.nextReboot(domain, this.o.rebootTimeoutMs);
    try {
      await virsh.reboot(domain);
    } catch (error) {
      if (error instanceof PersysError && error.code === "RUNTIME_UNAVAILABLE") throw error;
      this.ctx.logger.info({ domain, err: (error as Error).message }, "ACPI reboot refused; resetting the VM");
      rebooted.cancel();
      await virsh.reset(domain);
      return "reset";
    }
    if (await rebooted.promise) return "acpi";
    this.ctx.logger.info(
      { domain, timeoutMs: this.o.rebootTimeoutMs },
      "VM did not reboot on the ACPI request; resetting it",
    );
    await virsh.reset(domain);
    return "reset";
  }

  /** Resolves true at the domain's next `reboot` event, false after `timeoutMs`. */
  private nextReboot(domain: string, timeoutMs: number): { promise: Promise<boolean>; cancel: () => void } {
    let done: (rebooted: boolean) => void = () => {};
    const promise = new Promise<boolean>((resolve) => {
      done = resolve;
    });
    const waiters = this.rebootWaiters.get(domain) ?? new Set<() => void>();
    this.rebootWaiters.set(domain, waiters);
    const finish = (rebooted: boolean) => {
      clearTimeout(timer);
      waiters.delete(wake);
      if (waiters.size === 0) this.rebootWaiters.delete(domain);
      done(rebooted);
    };
    const wake = () => finish(true);
    const timer = setTimeout(() => finish(false), timeoutMs);
    timer.unref();
    waiters.add(wake);
    return { promise, cancel: () => finish(false) };
  }

  /** Reads the domain and records the replica's state from it. */
  async refresh(e: ReplicaEntry): Promise<void> {
    const d = e.desired;
    if (d.desired === "deleted" || d.kind !== "vm") return;
    const domain = this.domainOf(d);
    let state: DomainState | undefined;
    try {
      state = this.virsh && !this.unready ? await this.virsh.state(domain) : undefined;
      if (!this.virsh || this.unready) {
        if (e.lastError) this.ctx.set(e, "FAILED", e.lastError);
        return;
      }
    } catch {
      return;
    }
    if (!state) {
      if (e.lastError) this.ctx.set(e, "FAILED", e.lastError);
      else {
        e.recreate = true;
        this.ctx.set(e, "FAILED", {
          code: "RUNTIME_ERROR",
          message: `domain ${domain} was removed outside Persys`,
          retryable: true,
        });
      }
      return;
    }
    await this.observeDomain(e, domain, state);
    const running = state.state === "running" || state.state === "idle" || state.state === "paused";
    if (running) {
      e.lastError = undefined;
      this.ctx.set(e, "RUNNING");
      return;
    }
    if (state.state === "in shutdown") return this.ctx.set(e, d.desired === "stopped" ? "STOPPING" : "RUNNING");
    if (e.lastError) return this.ctx.set(e, "FAILED", e.lastError);
    if (d.desired === "stopped") return this.ctx.set(e, "STOPPED");
    await this.unexpectedStop(e, domain, state);
  }

  /** Records the domain's UUID, MACs and (when running) the DHCP-lease addresses. */
  private async observeDomain(e: ReplicaEntry, domain: string, state: DomainState): Promise<void> {
    const virsh = this.virsh!;
    try {
      const xml = await virsh.xml(domain);
      const uuid = /<uuid>([^<]+)<\/uuid>/.exec(xml)?.[1] ?? "";
      const nics = [...xml.matchAll(/<interface type='network'>[\s\S]*?<\/interface>/g)].map((m) => ({
        mac: /<mac address='([^']+)'/.exec(m[0])?.[1] ?? "",
        network: /<source network='([^']+)'/.exec(m[0])?.[1] ?? "",
      }));
      const leases = state.state === "running" && nics.length > 0 ? await virsh.addresses(domain) : [];
      e.observed.vm = {
        domain,
        uuid,
        consoleLog: this.o.storage.consolePath(domain),
        accel: /<domain type='kvm'/.test(xml) ? "kvm" : "tcg",
        interfaces: nics.map((n) => ({ ...n, ips: leases.filter((l) => l.mac === n.mac).map((l) => l.ip) })),
      };
    } catch {
      // keep the last observation
    }
  }

  /**
   * The guest stopped while it should run: crashed (VM_CRASHED) or failed to boot (VM_BOOT_FAILED),
   * with the console tail; the agent starts it again after a backoff (1 s doubling to 60 s; reset
   * after 5 minutes of running).
   */
  private async unexpectedStop(e: ReplicaEntry, domain: string, state: DomainState): Promise<void> {
    const tail = await consoleTail(this.o.storage.consolePath(domain));
    const ranMs = e.observed.startedAt ? this.ctx.clock() - e.observed.startedAt.getTime() : 0;
    const bootFailed = state.reason === "failed" || (ranMs > 0 && ranMs < 5_000);
    const why =
      state.reason === "crashed" || state.state === "crashed"
        ? "the guest crashed"
        : state.reason === "shutdown"
          ? "the guest powered itself off"
          : state.reason === "destroyed"
            ? "the domain was destroyed outside Persys"
            : `the domain is ${state.state}${state.reason ? ` (${state.reason})` : ""}`;
    if (e.restartTimer) return;
    e.restartDelayMs = ranMs > 300_000 ? 1000 : Math.min(60_000, Math.max(1000, e.restartDelayMs * 2));
    const delay = e.restartDelayMs;
    this.ctx.set(e, "STARTING", {
      code: bootFailed ? "VM_BOOT_FAILED" : "VM_CRASHED",
      message: `${why}; starting it again in ${delay} ms${tail ? `\nconsole:\n${tail}` : ""}`,
      retryable: true,
      nextRetryAt: new Date(this.ctx.clock() + delay),
    });
    e.restartTimer = setTimeout(() => {
      e.restartTimer = undefined;
      this.ctx.enqueue(e, async () => {
        if (e.desired.desired !== "running") return;
        e.agentRestarts++;
        e.observed.restartCount = e.agentRestarts;
        this.ctx.store.recordRestarts(e.desired.id, e.agentRestarts);
        try {
          await this.startDomain(this.conn(), e, domain);
        } catch (error) {
          e.lastError = reasonOf(error);
        }
        await this.refresh(e);
      });
    }, delay);
    e.restartTimer.unref();
  }

  /**
   * Destroys the domain (graceful first), undefines it, removes its overlays, data disks, seed and
   * console log — never the base image — then forgets the replica. Retried with backoff on failure.
   */
  async teardown(e: ReplicaEntry, attempt = 0): Promise<void> {
    e.cancelRestart();
    const d = e.desired;
    const domain = this.domainOf(d);
    const action = this.ctx.actions.begin("delete", d.id);
    action.start();
    try {
      this.ctx.set(e, "DELETING", e.observed.state === "DELETING" ? e.observed.reason : undefined);
      const virsh = this.conn();
      let volumes: string[] = [];
      if (await virsh.state(domain)) {
        volumes = diskSourcesOf(await virsh.xml(domain, true));
        await this.powerOff(virsh, domain, d.kind === "vm" ? d.spec.stopTimeoutSeconds : 30);
        await virsh.undefine(domain);
      }
      await this.o.storage.removeReplica(virsh, domain, volumes);
      action.done();
      if (e.desired.desired !== "deleted") return;
      this.entries.delete(domain);
      this.ctx.store.delete(d.id);
      this.ctx.gone(e);
    } catch (error) {
      const r = reasonOf(error);
      action.done(r.message);
      if (e.desired.desired !== "deleted") return;
      this.ctx.set(e, "DELETING", r);
      const delay = Math.min(30_000, 500 * 2 ** attempt);
      e.restartTimer = setTimeout(() => {
        e.restartTimer = undefined;
        this.ctx.enqueue(e, () => this.teardown(e, attempt + 1));
      }, delay);
      e.restartTimer.unref();
    }
  }

  private onDomainEvent(ev: DomainEvent): void {
    const domain = ev.domain;
    if (ev.type === "reboot") {
      for (const wake of this.rebootWaiters.get(domain) ?? []) wake();
      return;
    }
    const e = this.entries.get(domain);
    if (!e || e.desired.desired === "deleted") return;
    this.ctx.enqueue(e, () => this.refresh(e));
  }

  private refreshAll(): void {
    for (const e of this.entries.values()) if (!e.busy) this.ctx.enqueue(e, () => this.refresh(e));
  }

  /** Usage (vCPU time → millicores, balloon memory) and DHCP-lease addresses of running VMs. */
  private async poll(): Promise<void> {
    if (!this.virsh || this.unready) return;
    for (const [domain, e] of this.entries) {
      if (e.observed.state !== "RUNNING" || e.busy) continue;
      try {
        const state = await this.virsh.state(domain);
        if (state) await this.observeDomain(e, domain, state);
      } catch {
        // the next poll or event tells
      }
      try {
        const s = await this.virsh.stats(domain);
        const now = this.ctx.clock();
        const last = this.cpu.get(domain);
        this.cpu.set(domain, { ns: s.cpuTimeNs, at: now });
        if (last && now > last.at)
          e.observed.cpuMillicores = Math.round((s.cpuTimeNs - last.ns) / 1e3 / (now - last.at));
        e.observed.memoryBytes = s.memoryBytes;
        e.observed.usageAt = new Date(now);
      } catch (error) {
        this.ctx.logger.debug({ domain, err: String(error) }, "VM stats failed");
      }
      if (e.observed.state === "RUNNING" && !e.busy) this.ctx.set(e, e.observed.state, e.observed.reason);
    }
  }

  /**
   * Removes Persys domains of this node (by their metadata) that no desired replica owns, and
   * replica folders left without a domain, once they have been orphans for the grace period.
   */
  async collectOrphans(): Promise<number> {
    if (!this.virsh || this.unready) return 0;
    const virsh = this.virsh;
    const now = this.ctx.clock();
    const seen = new Set<string>();
    let removed = 0;
    const suffix = `.${this.ctx.nodeId}`;
    const names = await virsh.names();
    const candidates = new Set([...names, ...(await this.o.storage.replicaFolders(virsh, suffix))]);
    for (const domain of candidates) {
      if (!domain.endsWith(suffix) || this.entries.has(domain)) continue;
      const defined = names.includes(domain);
      if (defined) {
        const meta = parseReplicaMetadata(await virsh.xml(domain, true).catch(() => ""));
        if (meta?.node !== this.ctx.nodeId) continue;
      }
      seen.add(domain);
      const first = this.orphanSince.get(domain) ?? now;
      this.orphanSince.set(domain, first);
      if (now - first < this.o.orphanGraceMs || this.entries.has(domain)) continue;
      const action = this.ctx.actions.begin("gc", domain);
      action.start();
      try {
        let volumes: string[] = [];
        if (defined) {
          volumes = diskSourcesOf(await virsh.xml(domain, true).catch(() => ""));
          await virsh.destroy(domain).catch(() => {});
          await virsh.undefine(domain);
        }
        await this.o.storage.removeReplica(virsh, domain, volumes);
        removed++;
        this.ctx.logger.info(
          { domain, orphanForMs: now - first },
          "removed an orphan VM (Persys domain, no desired replica)",
        );
        action.done();
      } catch (error) {
        action.done((error as Error).message);
      }
    }
    for (const d of this.orphanSince.keys()) if (!seen.has(d)) this.orphanSince.delete(d);
    return removed;
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.events?.stop();
  }
}
