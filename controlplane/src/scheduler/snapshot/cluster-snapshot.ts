import { invalid, PersysError } from "@persys/schema";
import type { LabelSelector } from "../model/label-selector.js";
import { type Resources, resourceViolations } from "../model/resources.js";
import { type HostPort, hostPortKey, type SchedulerNode, validateNode } from "../model/scheduler-node.js";
import { improvedAspects } from "./change-aspects.js";
import type { ChangeAspect, ClusterChange, ReplicaRef } from "./cluster-change.js";
import { DimensionIndex } from "./free-capacity-index.js";
import { HostPortIndex } from "./host-port-index.js";
import { NodeClassRegistry } from "./node-classes.js";
import { NodeColumns } from "./node-columns.js";
import { type NodeEntry, type Reservation, replicaKey } from "./node-entry.js";
import { compileTraits, WorkloadIndex, type WorkloadTraits } from "./workload-index.js";

/** A replica's placement as the control plane records it (an assignment), to load into the snapshot. */
export interface ReplicaPlacement {
  readonly workloadId: string;
  readonly replica: number;
  readonly nodeId: string;
  readonly resources: Resources;
  readonly hostPorts?: readonly HostPort[];
  /** The workload's labels (matched by other workloads' anti-affinity). */
  readonly labels?: Readonly<Record<string, string>>;
  /** The workload's `placement.antiAffinity.workloads`. */
  readonly antiAffinity?: readonly LabelSelector[];
}

/** A reservation in compiled form, as the engine makes it. */
export interface CompiledPlacement {
  readonly workloadId: string;
  readonly replica: number;
  readonly entry: NodeEntry;
  readonly resources: Resources;
  readonly portKeys: readonly number[];
  readonly traits: WorkloadTraits;
}

/** The distinct port keys of a host port list. */
export function portKeys(ports: readonly HostPort[] | undefined): number[] {
  return [...new Set((ports ?? []).map(hostPortKey))];
}

/**
 * The scheduler's in-memory view of the cluster: nodes (grouped into equivalence classes), their
 * free resources by reservation, the replicas placed on them, host ports and measured usage.
 *
 * Every mutation is O(1) or proportional to what it touches (a node's labels, a replica's ports),
 * never to the cluster size, and bumps `generation`, so a caller can tell the cluster changed and a
 * pending replica can tell whether it was diagnosed against the current state. Mutations that can
 * unblock pending replicas return a {@link ClusterChange} saying what may have improved.
 *
 * Free capacity is allocatable minus the resources requested by reserved replicas; measured usage
 * never reduces it (it only feeds the utilisation scorer).
 */
export class ClusterSnapshot {
  readonly classes = new NodeClassRegistry();
  readonly workloads = new WorkloadIndex();
  readonly ports = new HostPortIndex();
  readonly columns = new NodeColumns();
  /** Free cpu, memory and disk, indexed for counting and intersecting fits without a scan. */
  readonly free = {
    cpu: new DimensionIndex((s) => this.columns.freeCpu[s]!),
    memory: new DimensionIndex((s) => this.columns.freeMemory[s]!),
    disk: new DimensionIndex((s) => this.columns.freeDisk[s]!),
  };
  private slotsChanged = 0;
  private readonly byId = new Map<string, NodeEntry>();
  private readonly dense: NodeEntry[] = [];
  private reserved = 0;
  private gen = 0;
  private undo: Reservation[] | undefined;

  /** Bumped by every mutation; equal generations mean an identical cluster. */
  get generation(): number {
    return this.gen;
  }

  /** Bumped whenever a slot gets another node or its node another class (for per-slot caches). */
  get slotVersion(): number {
    return this.slotsChanged;
  }

  /** Number of nodes. Slots 0..nodeCount-1 of `columns` are all live. */
  get nodeCount(): number {
    return this.dense.length;
  }

  /** The node in `slot` (0 ≤ slot < nodeCount). */
  entryAt(slot: number): NodeEntry {
    return this.dense[slot]!;
  }

  /** The snapshot entry of a node, or undefined. */
  entryOf(nodeId: string): NodeEntry | undefined {
    return this.byId.get(nodeId);
  }

  /** The node record as last upserted, or undefined. */
  node(nodeId: string): SchedulerNode | undefined {
    return this.byId.get(nodeId)?.node;
  }

  /** Every node, in slot order. */
  nodes(): SchedulerNode[] {
    return this.dense.map((e) => e.node);
  }

  /** What replicas reserved on a node, summed. */
  reservedOn(nodeId: string): Resources {
    const e = this.requireEntry(nodeId);
    const c = this.columns;
    const s = e.slot;
    return {
      cpuMillicores: c.allocCpu[s]! - c.freeCpu[s]!,
      memoryMiB: c.allocMemory[s]! - c.freeMemory[s]!,
      diskGiB: c.allocDisk[s]! - c.freeDisk[s]!,
    };
  }

  /** The replicas reserved on a node. */
  replicasOn(nodeId: string): ReplicaRef[] {
    return [...this.requireEntry(nodeId).reservations].map((r) => ({ workloadId: r.workloadId, replica: r.replica }));
  }

  /** The node a replica is reserved on, or undefined. */
  placementOf(workloadId: string, replica: number): string | undefined {
    return this.workloads.get(workloadId)?.replicas.get(replica)?.entry.id;
  }

  /** Number of reserved replicas. */
  get replicaCount(): number {
    return this.reserved;
  }

  /**
   * Adds a node or replaces its record. Reservations on the node stay. Returns what may have
   * improved (a new node: everything).
   */
  upsertNode(node: SchedulerNode): ClusterChange {
    validateNode(node);
    this.assertNotTentative("upsertNode");
    const existing = this.byId.get(node.id);
    if (existing === undefined) return this.addNode(node);
    const aspects = improvedAspects(existing.node, node);
    const cls = this.classes.classFor(node);
    if (cls !== existing.cls) {
      const before = existing.cls;
      this.classes.leave(before, existing);
      this.classes.join(cls, existing);
      existing.cls = cls;
      this.workloads.nodeRelabelled(existing, before.labels, cls.labels);
      this.slotsChanged++;
    }
    const ports = portKeys(node.usedHostPorts);
    this.ports.remove(existing, existing.ownPorts);
    this.ports.add(existing, ports);
    existing.ownPorts = ports;
    const reserved = this.reservedOn(node.id);
    const before = this.freeOf(existing.slot);
    existing.node = node;
    this.writeColumns(existing, reserved);
    this.indexFreeChange(existing.slot, before);
    return this.changed("node-updated", node.id, aspects);
  }

  /** Merges a partial update (e.g. `{cordoned: true}`) into a node's record. */
  updateNode(nodeId: string, patch: Partial<Omit<SchedulerNode, "id">>): ClusterChange {
    return this.upsertNode({ ...this.requireEntry(nodeId).node, ...patch, id: nodeId });
  }

  /**
   * Removes a node. Replicas reserved on it are released and listed in `displaced` (the caller
   * re-places them). Returns undefined when the node is unknown.
   */
  removeNode(nodeId: string): ClusterChange | undefined {
    this.assertNotTentative("removeNode");
    const entry = this.byId.get(nodeId);
    if (entry === undefined) return undefined;
    const displaced: ReplicaRef[] = [];
    for (const r of [...entry.reservations]) {
      this.unreserve(r);
      displaced.push({ workloadId: r.workloadId, replica: r.replica });
    }
    this.ports.remove(entry, entry.ownPorts);
    this.classes.leave(entry.cls, entry);
    const [c, m, d] = this.freeOf(entry.slot);
    this.free.cpu.remove(entry.slot, c);
    this.free.memory.remove(entry.slot, m);
    this.free.disk.remove(entry.slot, d);
    const last = this.dense.pop()!;
    if (last !== entry) {
      this.dense[entry.slot] = last;
      this.columns.move(last.slot, entry.slot);
      for (const index of [this.free.cpu, this.free.memory, this.free.disk]) index.move(last.slot, entry.slot);
      this.ports.move(last, last.slot, entry.slot);
      last.slot = entry.slot;
    }
    this.byId.delete(nodeId);
    this.slotsChanged++;
    this.gen++;
    return { generation: this.gen, kind: "node-removed", nodeId, aspects: ["topology"], displaced };
  }

  /** Records measured usage (or its absence); affects scoring only. */
  updateUsage(nodeId: string, usage: Resources | undefined): ClusterChange {
    const entry = this.requireEntry(nodeId);
    this.assertNotTentative("updateUsage");
    const bad = usage === undefined ? [] : resourceViolations(usage, "usage");
    if (bad.length > 0) throw invalid("INVALID_ARGUMENT", bad, `usage of node ${nodeId}`);
    entry.node = { ...entry.node, usage };
    this.writeUsage(entry);
    return this.changed("usage-updated", nodeId, []);
  }

  /**
   * Loads a placed replica (e.g. an assignment read from the store at startup). It is reserved
   * as given, even beyond allocatable: a reservation records a fact, the engine never makes one
   * that does not fit. Throws NOT_FOUND for an unknown node, CONFLICT if the replica is reserved.
   */
  reserve(p: ReplicaPlacement): void {
    const entry = this.requireEntry(p.nodeId);
    this.reserveCompiled({
      workloadId: p.workloadId,
      replica: p.replica,
      entry,
      resources: p.resources,
      portKeys: portKeys(p.hostPorts),
      traits: compileTraits(p.labels, p.antiAffinity),
    });
  }

  /** Reserves a placement the engine compiled; see {@link reserve}. */
  reserveCompiled(p: CompiledPlacement): void {
    const held = this.workloads.get(p.workloadId)?.replicas.get(p.replica);
    if (held !== undefined) {
      throw new PersysError(
        "CONFLICT",
        `replica ${replicaKey(p.workloadId, p.replica)} is already reserved on node ${held.entry.id}; release it first`,
      );
    }
    const r: Reservation = {
      workloadId: p.workloadId,
      replica: p.replica,
      entry: p.entry,
      resources: p.resources,
      hostPorts: p.portKeys,
    };
    this.reserved++;
    p.entry.reservations.add(r);
    this.adjustFree(p.entry.slot, p.resources, -1);
    this.ports.add(p.entry, r.hostPorts);
    this.workloads.add(r, p.traits);
    this.gen++;
    this.undo?.push(r);
  }

  /** Releases a replica's reservation; undefined when it had none. */
  release(workloadId: string, replica: number): ClusterChange | undefined {
    this.assertNotTentative("release");
    const r = this.workloads.get(workloadId)?.replicas.get(replica);
    if (r === undefined) return undefined;
    this.unreserve(r);
    const aspects: ChangeAspect[] = ["placements"];
    const res = r.resources;
    if (res.cpuMillicores > 0 || res.memoryMiB > 0 || res.diskGiB > 0) aspects.push("capacity");
    if (r.hostPorts.length > 0) aspects.push("host-ports");
    this.gen++;
    return { generation: this.gen, kind: "replica-released", nodeId: r.entry.id, aspects };
  }

  /** Releases every replica of a workload. */
  releaseWorkload(workloadId: string): ClusterChange[] {
    const record = this.workloads.get(workloadId);
    if (record === undefined) return [];
    return [...record.replicas.keys()].map((i) => this.release(workloadId, i)!);
  }

  /**
   * Runs `fn` and then takes back every reservation it made, restoring the generation: the
   * engine's dry run. No other mutation is allowed inside. Not re-entrant.
   */
  tentative<T>(fn: () => T): T {
    if (this.undo !== undefined) throw new PersysError("INTERNAL", "tentative() is not re-entrant");
    const generation = this.gen;
    const undo: Reservation[] = [];
    this.undo = undo;
    try {
      return fn();
    } finally {
      this.undo = undefined;
      for (let i = undo.length - 1; i >= 0; i--) this.unreserve(undo[i]!);
      this.gen = generation;
    }
  }

  private addNode(node: SchedulerNode): ClusterChange {
    const entry: NodeEntry = {
      id: node.id,
      slot: this.dense.length,
      node,
      cls: this.classes.classFor(node),
      reservations: new Set(),
      ownPorts: portKeys(node.usedHostPorts),
    };
    this.classes.join(entry.cls, entry);
    this.columns.ensure(entry.slot + 1);
    for (const index of [this.free.cpu, this.free.memory, this.free.disk]) index.ensure(this.columns.capacity);
    this.ports.ensure(this.columns.capacity);
    this.dense.push(entry);
    this.byId.set(node.id, entry);
    this.ports.add(entry, entry.ownPorts);
    this.writeColumns(entry, { cpuMillicores: 0, memoryMiB: 0, diskGiB: 0 });
    const [c, m, d] = this.freeOf(entry.slot);
    this.free.cpu.add(entry.slot, c);
    this.free.memory.add(entry.slot, m);
    this.free.disk.add(entry.slot, d);
    this.slotsChanged++;
    return this.changed("node-added", node.id, ["node-added"]);
  }

  private writeColumns(entry: NodeEntry, reserved: Resources): void {
    const c = this.columns;
    const s = entry.slot;
    const n = entry.node;
    c.classOf[s] = entry.cls.id;
    c.allocCpu[s] = n.allocatable.cpuMillicores;
    c.allocMemory[s] = n.allocatable.memoryMiB;
    c.allocDisk[s] = n.allocatable.diskGiB;
    c.invAllocCpu[s] = n.allocatable.cpuMillicores > 0 ? 1 / n.allocatable.cpuMillicores : 0;
    c.invAllocMemory[s] = n.allocatable.memoryMiB > 0 ? 1 / n.allocatable.memoryMiB : 0;
    c.invAllocDisk[s] = n.allocatable.diskGiB > 0 ? 1 / n.allocatable.diskGiB : 0;
    c.freeCpu[s] = n.allocatable.cpuMillicores - reserved.cpuMillicores;
    c.freeMemory[s] = n.allocatable.memoryMiB - reserved.memoryMiB;
    c.freeDisk[s] = n.allocatable.diskGiB - reserved.diskGiB;
    c.capacityCpu[s] = n.capacity.cpuMillicores;
    c.capacityMemory[s] = n.capacity.memoryMiB;
    this.writeUsage(entry);
  }

  private writeUsage(entry: NodeEntry): void {
    const c = this.columns;
    const s = entry.slot;
    const u = entry.node.usage;
    c.hasUsage[s] = u === undefined ? 0 : 1;
    c.usageCpu[s] = u?.cpuMillicores ?? 0;
    c.usageMemory[s] = u?.memoryMiB ?? 0;
    if (u === undefined) c.usageShare[s] = -1;
    else {
      const cap = entry.node.capacity;
      const cpu = cap.cpuMillicores > 0 ? u.cpuMillicores / cap.cpuMillicores : 1;
      const memory = cap.memoryMiB > 0 ? u.memoryMiB / cap.memoryMiB : 1;
      c.usageShare[s] = Math.min(1, Math.max(0, cpu, memory));
    }
  }

  private adjustFree(slot: number, r: Resources, sign: 1 | -1): void {
    const c = this.columns;
    const cpu = c.freeCpu[slot]!;
    const memory = c.freeMemory[slot]!;
    const disk = c.freeDisk[slot]!;
    c.freeCpu[slot] = cpu + sign * r.cpuMillicores;
    c.freeMemory[slot] = memory + sign * r.memoryMiB;
    c.freeDisk[slot] = disk + sign * r.diskGiB;
    this.free.cpu.change(slot, cpu, c.freeCpu[slot]!);
    this.free.memory.change(slot, memory, c.freeMemory[slot]!);
    this.free.disk.change(slot, disk, c.freeDisk[slot]!);
  }

  private freeOf(slot: number): [number, number, number] {
    const c = this.columns;
    return [c.freeCpu[slot]!, c.freeMemory[slot]!, c.freeDisk[slot]!];
  }

  private indexFreeChange(slot: number, before: readonly [number, number, number]): void {
    const [c, m, d] = this.freeOf(slot);
    this.free.cpu.change(slot, before[0], c);
    this.free.memory.change(slot, before[1], m);
    this.free.disk.change(slot, before[2], d);
  }

  private unreserve(r: Reservation): void {
    this.reserved--;
    r.entry.reservations.delete(r);
    this.adjustFree(r.entry.slot, r.resources, 1);
    this.ports.remove(r.entry, r.hostPorts);
    this.workloads.remove(r);
  }

  private changed(kind: ClusterChange["kind"], nodeId: string, aspects: ChangeAspect[]): ClusterChange {
    this.gen++;
    return { generation: this.gen, kind, nodeId, aspects };
  }

  private requireEntry(nodeId: string): NodeEntry {
    const e = this.byId.get(nodeId);
    if (e === undefined) throw new PersysError("NOT_FOUND", `node ${nodeId} is not in the scheduler snapshot`);
    return e;
  }

  private assertNotTentative(op: string): void {
    if (this.undo !== undefined) throw new PersysError("INTERNAL", `${op} is not allowed inside a dry run`);
  }
}
