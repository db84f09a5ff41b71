import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Virsh } from "./virsh.js";

/** One libvirt lifecycle event, e.g. `{domain: "web-0.n1", event: "Stopped", detail: "Crashed"}`. */
export interface DomainLifecycleEvent {
  readonly domain: string;
  readonly event: string;
  readonly detail: string;
}

/** Parses a `virsh event --loop` line: `event 'lifecycle' for domain 'web-0.n1': Stopped Destroyed`. */
export function parseLifecycleLine(line: string): DomainLifecycleEvent | undefined {
  const m = /event 'lifecycle' for domain '([^']+)': (\S+)\s*(\S*)/.exec(line);
  return m ? { domain: m[1] ?? "", event: m[2] ?? "", detail: m[3] ?? "" } : undefined;
}

/**
 * libvirt's domain lifecycle events from a long-running `virsh event --all --loop --event lifecycle`
 * child. When the child ends (libvirtd restarted, virsh killed) it is started again after a second,
 * and `onReconnect` asks the owner to re-read every domain (events may have been missed).
 */
export class VmEventStream {
  private child: ChildProcess | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly virsh: Virsh,
    private readonly onEvent: (event: DomainLifecycleEvent) => void,
    private readonly onReconnect: () => void,
  ) {}

  start(): void {
    this.stopped = false;
    const child = spawn(this.virsh.tool.path, this.virsh.args("event", "--all", "--loop", "--event", "lifecycle"), {
      stdio: ["ignore", "pipe", "ignore"],
    });
    this.child = child;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const event = parseLifecycleLine(line);
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
