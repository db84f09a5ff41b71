import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Virsh } from "./virsh.js";

/**
 * One libvirt domain event the driver acts on: a lifecycle change (`{domain: "web-0.n1", type:
 * "lifecycle", event: "Stopped", detail: "Crashed"}`) or a guest reset (`type: "reboot"`: the guest
 * rebooted inside the same QEMU process — ACPI reboot, `virsh reset`, or the guest's own reboot).
 */
export interface DomainEvent {
  readonly domain: string;
  readonly type: "lifecycle" | "reboot";
  readonly event: string;
  readonly detail: string;
}

/**
 * Parses a `virsh event --all --loop` line: `event 'lifecycle' for domain 'web-0.n1': Stopped
 * Destroyed` or `event 'reboot' for domain 'web-0.n1'`; other event types give undefined.
 */
export function parseEventLine(line: string): DomainEvent | undefined {
  const lifecycle = /event 'lifecycle' for domain '([^']+)': (\S+)\s*(\S*)/.exec(line);
  if (lifecycle) {
    return { domain: lifecycle[1] ?? "", type: "lifecycle", event: lifecycle[2] ?? "", detail: lifecycle[3] ?? "" };
  }
  const reboot = /event 'reboot' for domain '([^']+)'/.exec(line);
  return reboot ? { domain: reboot[1] ?? "", type: "reboot", event: "Reboot", detail: "" } : undefined;
}

/**
 * libvirt's domain events from one long-running `virsh event --all --loop` child (every event
 * type of every domain; lifecycle and reboot events are passed on). When the child ends (libvirtd
 * restarted, virsh killed) it is started again after a second, and `onReconnect` asks the owner to
 * re-read every domain (events may have been missed).
 */
export class VmEventStream {
  private child: ChildProcess | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly virsh: Virsh,
    private readonly onEvent: (event: DomainEvent) => void,
    private readonly onReconnect: () => void,
  ) {}

  start(): void {
    this.stopped = false;
    const child = spawn(this.virsh.tool.path, this.virsh.args("event", "--all", "--loop"), {
      stdio: ["ignore", "pipe", "ignore"],
    });
    this.child = child;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const event = parseEventLine(line);
      if (event) this.onEvent(event);
    });
    child.on("error", () => {});
    child.on("close", () => {
      if (this.stopped || this.child !== child) return;
      this.timer = setTimeout(() => {
        this.start();
        this.onReconnect();
      }, 1000);
      this.timer.unref();
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.child?.kill();
    this.child = undefined;
  }
}
