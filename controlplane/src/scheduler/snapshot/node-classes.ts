import type { LabelMap } from "../model/label-selector.js";
import type { SchedulerNode, WorkloadKind } from "../model/scheduler-node.js";
import { setBit, wordsFor } from "./node-bitset.js";
import type { NodeEntry } from "./node-entry.js";

/** The nodes of each domain of a topology label, as bitsets over slots. */
export interface DomainSlots {
  /** Bitset per domain id. */
  readonly domainBits: readonly Uint32Array[];
  /** Nodes per domain id. */
  readonly domainSize: Int32Array;
  /** Nodes without the label. */
  readonly missingBits: Uint32Array;
  readonly missingSize: number;
}

/**
 * An equivalence class of nodes: every property a static filter may read (labels, capabilities,
 * runtimes, arch, ready/cordoned/draining) is identical for its members, so a static filter's
 * verdict for the class is its verdict for each member. Members differ only in resources, usage,
 * ports and placed replicas, which node-scoped filters read per node.
 *
 * A label unique to each node (a hostname label) makes every node its own class; scheduling stays
 * correct, the static cache just stops paying.
 */
export class NodeClass {
  /** The nodes in the class now; classes are never deleted, an empty class has no members. */
  readonly members = new Set<NodeEntry>();
  constructor(
    readonly id: number,
    readonly key: string,
    readonly labels: LabelMap,
    readonly capabilities: ReadonlySet<string>,
    readonly runtimes: ReadonlySet<WorkloadKind>,
    readonly arch: string,
    readonly ready: boolean,
    readonly cordoned: boolean,
    readonly draining: boolean,
  ) {}

  /** Number of member nodes. */
  get size(): number {
    return this.members.size;
  }
}

/**
 * The domains of one topology label: each distinct value gets a small integer id, and each class
 * maps to the id of its value (or -1 when its nodes lack the label). Extended lazily as classes
 * appear; a class's labels never change, so an entry once computed stays valid.
 */
export class TopologyDomains {
  readonly values: string[] = [];
  private readonly byValue = new Map<string, number>();
  private domainOf = new Int32Array(16);
  private computed = 0;
  private slots: DomainSlots | undefined;
  private slotsVersion = -1;

  constructor(readonly labelKey: string) {}

  /**
   * The nodes of each domain as bitsets, rebuilt (O(nodes)) only when the slot assignment changed
   * since the last call (`slotVersion`), so steady-state decisions reuse them.
   */
  domainSlots(classes: readonly NodeClass[], classOf: Int32Array, nodes: number, slotVersion: number): DomainSlots {
    if (this.slots !== undefined && this.slotsVersion === slotVersion) return this.slots;
    const domainOf = this.domainOfClass(classes);
    const words = wordsFor(nodes);
    const domainBits = this.values.map(() => new Uint32Array(words));
    const domainSize = new Int32Array(this.values.length);
    const missingBits = new Uint32Array(words);
    let missingSize = 0;
    for (let s = 0; s < nodes; s++) {
      const d = domainOf[classOf[s]!]!;
      if (d < 0) {
        setBit(missingBits, s);
        missingSize++;
      } else {
        setBit(domainBits[d]!, s);
        domainSize[d]!++;
      }
    }
    this.slots = { domainBits, domainSize, missingBits, missingSize };
    this.slotsVersion = slotVersion;
    return this.slots;
  }

  /** The domain id of a label value, or undefined when no class has that value. */
  idOf(value: string): number | undefined {
    return this.byValue.get(value);
  }

  /** Domain id per class id (-1: label missing), valid for every class in `classes`. */
  domainOfClass(classes: readonly NodeClass[]): Int32Array {
    if (this.computed < classes.length) {
      if (this.domainOf.length < classes.length) {
        const grown = new Int32Array(Math.max(classes.length, this.domainOf.length * 2));
        grown.set(this.domainOf);
        this.domainOf = grown;
      }
      for (let c = this.computed; c < classes.length; c++) {
        const value = classes[c]!.labels.get(this.labelKey);
        if (value === undefined) {
          this.domainOf[c] = -1;
          continue;
        }
        let id = this.byValue.get(value);
        if (id === undefined) {
          id = this.values.length;
          this.values.push(value);
          this.byValue.set(value, id);
        }
        this.domainOf[c] = id;
      }
      this.computed = classes.length;
    }
    return this.domainOf;
  }
}

function classKey(node: SchedulerNode): string {
  const labels = Object.keys(node.labels)
    .sort()
    .map((k) => `${k}\u0001${node.labels[k]}`)
    .join("\u0002");
  const caps = [...new Set(node.capabilities)].sort().join(",");
  const runtimes = [...new Set(node.runtimes)].sort().join(",");
  const flags = `${node.ready ? "R" : "r"}${node.cordoned ? "C" : "c"}${node.draining ? "D" : "d"}`;
  return `${labels}\u0003${caps}\u0003${runtimes}\u0003${node.arch}\u0003${flags}`;
}

/** All node classes of a snapshot, by id (dense, append-only). */
export class NodeClassRegistry {
  readonly all: NodeClass[] = [];
  /** Bumped whenever a class gains or loses a member, so cached per-class counts can tell. */
  sizeVersion = 0;
  private readonly byKey = new Map<string, NodeClass>();
  private readonly domains = new Map<string, TopologyDomains>();

  /** The class `node` belongs in, created on first sight (without adding the node to it). */
  classFor(node: SchedulerNode): NodeClass {
    const key = classKey(node);
    let cls = this.byKey.get(key);
    if (cls === undefined) {
      const labels = new Map<string, string>();
      for (const k of Object.keys(node.labels)) labels.set(k, String(node.labels[k]));
      cls = new NodeClass(
        this.all.length,
        key,
        labels,
        new Set(node.capabilities),
        new Set(node.runtimes),
        node.arch,
        node.ready,
        node.cordoned,
        node.draining,
      );
      this.all.push(cls);
      this.byKey.set(key, cls);
    }
    return cls;
  }

  /** Adds a node to a class. */
  join(cls: NodeClass, entry: NodeEntry): void {
    cls.members.add(entry);
    this.sizeVersion++;
  }

  /** Removes a node from a class. */
  leave(cls: NodeClass, entry: NodeEntry): void {
    cls.members.delete(entry);
    this.sizeVersion++;
  }

  /** The domains of a topology label key (shared by the spread filter and scorer). */
  topology(labelKey: string): TopologyDomains {
    let d = this.domains.get(labelKey);
    if (d === undefined) {
      d = new TopologyDomains(labelKey);
      this.domains.set(labelKey, d);
    }
    return d;
  }
}
