import { join } from "node:path";
import type { Logger } from "pino";
import type { AgentConfig } from "../../config/agent-config.js";
import type { ReplicaDriverFactory } from "../../replicas/replica-driver.js";
import { type AcceleratorProbeResult, probeAccelerator } from "./accelerator-probe.js";
import { VmDriver } from "./vm-driver.js";
import { VmStorage } from "./vm-storage.js";

/**
 * The agent's VM runtime: the VM driver (built by the replica manager through `factory`) and the
 * accelerator probe behind the node's `kvm` capability. The probe runs in the background after
 * start; `onCapabilitiesChange` fires when its answer is in (re-register to advertise it).
 */
export class VmRuntime {
  driver: VmDriver | undefined;
  private probe: AcceleratorProbeResult | undefined;
  private probeError = "";

  constructor(
    private readonly config: AgentConfig,
    private readonly logger: Logger,
    private readonly onCapabilitiesChange: () => void,
  ) {}

  get enabled(): boolean {
    return this.config.runtimes.vm.enabled;
  }

  /** Whether KVM proved to boot a guest on this node, and why (not). */
  kvm(): { ok: boolean; reason: string } {
    if (this.probe) return { ok: this.probe.kvm, reason: this.probe.reason };
    return { ok: false, reason: this.probeError || "the accelerator probe has not finished" };
  }

  /** Node capabilities this runtime adds: `libvirt` while libvirtd answers, `kvm` when the probe booted under KVM. */
  capabilities(): string[] {
    if (!this.driver) return [];
    return [...(this.driver.notReady() ? [] : ["libvirt"]), ...(this.kvm().ok ? ["kvm"] : [])];
  }

  readonly factory: ReplicaDriverFactory = (ctx) => {
    const vm = this.config.runtimes.vm;
    const root = vm.storageDir || join(this.config.stateDir, "vm");
    this.driver = new VmDriver(ctx, {
      uri: vm.uri,
      storage: new VmStorage(root, vm.imagesDir || join(root, "images"), vm.pools),
      defaultNetwork: vm.defaultNetwork,
      kvm: () => this.kvm(),
      pollIntervalMs: this.config.usage.statsIntervalSeconds * 1000,
      orphanGraceMs: this.config.gc.orphanGraceSeconds * 1000,
      gcIntervalMs: this.config.gc.intervalSeconds * 1000,
      rebootTimeoutMs: vm.rebootTimeoutSeconds * 1000,
      onReadyChange: (ready) => {
        this.logger[ready ? "info" : "warn"](
          { uri: vm.uri, reason: this.driver?.notReady()?.message },
          "VM runtime readiness changed",
        );
        this.onCapabilitiesChange();
      },
    });
    return this.driver;
  };

  /** Connects the driver to libvirt and starts the accelerator probe (background). */
  async start(): Promise<void> {
    await this.driver?.start();
    const probe = this.config.runtimes.vm.probe;
    if (!probe.kernel || !probe.initrd) {
      this.probeError = "no probe guest is configured (runtimes.vm.probe.kernel/initrd)";
      return;
    }
    void probeAccelerator({ guest: { kernel: probe.kernel, initrd: probe.initrd }, stateDir: this.config.stateDir })
      .then((result) => {
        this.probe = result;
        this.logger.info(
          {
            kvm: result.kvm,
            reason: result.reason,
            tcgWorks: result.tcgWorks,
            bootMs: result.bootMs,
            cached: result.cached,
          },
          "accelerator probed",
        );
        this.onCapabilitiesChange();
      })
      .catch((error: unknown) => {
        this.probeError = `the accelerator probe failed: ${(error as Error).message}`;
        this.logger.warn({ err: this.probeError }, "accelerator probe failed");
      });
  }
}
