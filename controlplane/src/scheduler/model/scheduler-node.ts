import { invalid } from "@persys/schema";
import { type Resources, resourceViolations } from "./resources.js";

/** The three kinds of workload, which are also the runtimes a node can offer. */
export type WorkloadKind = "container" | "compose" | "vm";

/** Every workload kind. */
export const workloadKinds: readonly WorkloadKind[] = ["container", "compose", "vm"];

/** A host port: the number and protocol a replica binds on the node. */
export interface HostPort {
  readonly port: number;
  readonly protocol: "tcp" | "udp";
}

/**
 * A node as the scheduler sees it: the control plane maps its node records (agent registration,
 * heartbeats, operator cordon/drain) onto this plain shape.
 *
 * `allocatable` is what workloads may reserve (capacity minus what the system keeps); the scheduler
 * fits requests against allocatable minus the reservations of placed replicas, never against
 * `usage`, which only steers scoring.
 */
export interface SchedulerNode {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Feature flags the agent probed, e.g. `kvm`. */
  readonly capabilities: readonly string[];
  /** Runtimes the agent serves. */
  readonly runtimes: readonly WorkloadKind[];
  /** CPU architecture, e.g. `amd64`, `arm64`. */
  readonly arch: string;
  readonly capacity: Resources;
  readonly allocatable: Resources;
  /** Measured usage from the last report, or undefined when the node has not reported any. */
  readonly usage?: Resources | undefined;
  /** Cordoned by an operator: keeps its replicas, takes no new ones. */
  readonly cordoned: boolean;
  /** Being drained: takes no new replicas. */
  readonly draining: boolean;
  /** Live (heartbeat lease held) and reporting ready. */
  readonly ready: boolean;
  /** Host ports held by processes the scheduler did not place (reported by the agent). */
  readonly usedHostPorts?: readonly HostPort[];
}

/** Field violations of a host port list at `path`. */
export function hostPortViolations(
  ports: readonly HostPort[] | undefined,
  path: string,
): { path: string; reason: string }[] {
  if (ports === undefined) return [];
  if (!Array.isArray(ports)) return [{ path, reason: "must be a list" }];
  const out: { path: string; reason: string }[] = [];
  ports.forEach((p, i) => {
    if (!Number.isInteger(p?.port) || p.port < 1 || p.port > 65535) {
      out.push({ path: `${path}[${i}].port`, reason: "must be an integer from 1 to 65535" });
    }
    if (p?.protocol !== "tcp" && p?.protocol !== "udp") {
      out.push({ path: `${path}[${i}].protocol`, reason: "must be tcp or udp" });
    }
  });
  return out;
}

/** A host port as one integer key: port × 2 + (udp ? 1 : 0). */
export function hostPortKey(p: HostPort): number {
  return p.port * 2 + (p.protocol === "udp" ? 1 : 0);
}

/** The `tcp/8080` text of a host port key. */
export function hostPortText(key: number): string {
  return `${key % 2 === 1 ? "udp" : "tcp"}/${Math.floor(key / 2)}`;
}

/**
 * Checks a node record; throws INVALID_ARGUMENT naming every bad field. The snapshot calls it on
 * every upsert, so a malformed report never enters scheduling.
 */
export function validateNode(node: SchedulerNode): void {
  const v: { path: string; reason: string }[] = [];
  if (typeof node?.id !== "string" || node.id === "") v.push({ path: "id", reason: "is required" });
  if (typeof node?.labels !== "object" || node.labels === null) v.push({ path: "labels", reason: "must be an object" });
  if (!Array.isArray(node?.capabilities)) v.push({ path: "capabilities", reason: "must be a list" });
  if (!Array.isArray(node?.runtimes)) v.push({ path: "runtimes", reason: "must be a list" });
  if (typeof node?.arch !== "string") v.push({ path: "arch", reason: "must be a string" });
  v.push(...resourceViolations(node?.capacity, "capacity"), ...resourceViolations(node?.allocatable, "allocatable"));
  if (node?.usage !== undefined) v.push(...resourceViolations(node.usage, "usage"));
  for (const flag of ["cordoned", "draining", "ready"] as const) {
    if (typeof node?.[flag] !== "boolean") v.push({ path: flag, reason: "must be a boolean" });
  }
  v.push(...hostPortViolations(node?.usedHostPorts, "usedHostPorts"));
  if (v.length > 0) throw invalid("INVALID_ARGUMENT", v, `node ${String(node?.id)}`);
}
