import type { NodeJson, ResourcesJson } from "../api/wire-types.js";

/** One bar of a node card: a resource dimension, its allocatable total, reserved and measured use. */
export interface DimensionBar {
  readonly dimension: "cpu" | "memory" | "disk";
  readonly unit: string;
  readonly allocatable: number;
  readonly capacity: number;
  readonly reserved: number;
  readonly usage: number;
  /** reserved / allocatable, 0..1 (clamped; over-reservation shows as full). */
  readonly reservedFraction: number;
  readonly usageFraction: number;
}

const dims = [
  { dimension: "cpu", field: "cpuMillicores", unit: "m" },
  { dimension: "memory", field: "memoryMib", unit: "MiB" },
  { dimension: "disk", field: "diskGib", unit: "GiB" },
] as const;

function get(r: ResourcesJson | undefined, field: keyof ResourcesJson): number {
  return r?.[field] ?? 0;
}

function fraction(part: number, whole: number): number {
  if (whole <= 0) return part > 0 ? 1 : 0;
  return Math.min(1, Math.max(0, part / whole));
}

/** The card's bars, one per dimension: allocatable (the bar), reserved by replicas, measured use. */
export function nodeBars(node: NodeJson): DimensionBar[] {
  return dims.map(({ dimension, field, unit }) => {
    const allocatable = get(node.allocatable, field);
    const reserved = get(node.allocated, field);
    const usage = get(node.usage, field);
    return {
      dimension,
      unit,
      allocatable,
      capacity: get(node.capacity, field),
      reserved,
      usage,
      reservedFraction: fraction(reserved, allocatable),
      usageFraction: fraction(usage, allocatable),
    };
  });
}

/** "ready", "not ready", "lost", with cordon and drain: what the card's status line says. */
export function nodeStatus(node: NodeJson): { text: string; tone: "ok" | "warn" | "bad" } {
  const state = (node.state ?? "NODE_STATE_UNSPECIFIED").replace("NODE_STATE_", "").toLowerCase().replace(/_/g, " ");
  const tone = node.state === "NODE_STATE_READY" ? "ok" : node.state === "NODE_STATE_NOT_READY" ? "warn" : "bad";
  const extra = node.draining ? ", draining" : node.cordoned ? ", cordoned" : "";
  return { text: `${state}${extra}`, tone: extra && tone === "ok" ? "warn" : tone };
}

/** Runtimes (from supported kinds) and capabilities, e.g. ["container", "compose", "kvm"], without repeats. */
export function nodeFeatures(node: NodeJson): string[] {
  const kinds = (node.supportedKinds ?? []).map((k) => k.replace("WORKLOAD_KIND_", "").toLowerCase());
  return [...new Set([...kinds, ...(node.capabilities ?? [])])];
}
