/**
 * The control plane's key layout in the state store. Everything lives under one prefix (default
 * `/persys/`), so several clusters can share an etcd. The store holds current state only; history
 * goes to the event store.
 *
 * | key                                   | value                  | written by               |
 * |---------------------------------------|------------------------|--------------------------|
 * | `workloads/<id>`                      | WorkloadRecord         | API (apply, delete, ...) |
 * | `assignments/<id>/<index>`            | AssignmentRecord       | leader (placement)       |
 * | `pending/<id>/<index>`                | PendingRecord          | leader (unschedulable)   |
 * | `status/<id>/<index>`                 | ReplicaStatusRecord    | heartbeat handler, leader|
 * | `nodes/<node>`                        | NodeRecord             | registration, API, leader|
 * | `liveness/<node>`                     | LivenessRecord (lease) | registration, heartbeats |
 * | `strays/<node>/<workload>/<index>`    | StrayRecord            | heartbeat handler        |
 * | `secrets/<name>`                      | SecretRecord (sealed)  | API (put, delete secret) |
 * | `leader`                              | leader election        | election                 |
 */
export type RecordKind =
  | "workload"
  | "assignment"
  | "pending"
  | "status"
  | "node"
  | "liveness"
  | "stray"
  | "secret"
  | "leader";

export interface ParsedKey {
  readonly kind: RecordKind;
  readonly workloadId?: string;
  readonly index?: number;
  readonly nodeId?: string;
  readonly secretName?: string;
}

const folders: Record<string, RecordKind> = {
  workloads: "workload",
  assignments: "assignment",
  pending: "pending",
  status: "status",
  nodes: "node",
  liveness: "liveness",
  strays: "stray",
  secrets: "secret",
};

export class ClusterKeys {
  constructor(readonly prefix: string) {}

  workload(id: string): string {
    return `${this.prefix}workloads/${id}`;
  }
  assignment(id: string, index: number): string {
    return `${this.prefix}assignments/${id}/${index}`;
  }
  assignments(id: string): string {
    return `${this.prefix}assignments/${id}/`;
  }
  pending(id: string, index: number): string {
    return `${this.prefix}pending/${id}/${index}`;
  }
  pendings(id: string): string {
    return `${this.prefix}pending/${id}/`;
  }
  status(id: string, index: number): string {
    return `${this.prefix}status/${id}/${index}`;
  }
  statuses(id: string): string {
    return `${this.prefix}status/${id}/`;
  }
  node(id: string): string {
    return `${this.prefix}nodes/${id}`;
  }
  liveness(id: string): string {
    return `${this.prefix}liveness/${id}`;
  }
  stray(nodeId: string, workloadId: string, index: number): string {
    return `${this.prefix}strays/${nodeId}/${workloadId}/${index}`;
  }
  secret(name: string): string {
    return `${this.prefix}secrets/${name}`;
  }
  get secrets(): string {
    return `${this.prefix}secrets/`;
  }
  get leader(): string {
    return `${this.prefix}leader`;
  }

  /** What a key under the prefix holds, or undefined for keys of no interest. */
  parse(key: string): ParsedKey | undefined {
    if (!key.startsWith(this.prefix)) return undefined;
    if (key === this.leader) return { kind: "leader" };
    const parts = key.slice(this.prefix.length).split("/");
    const kind = folders[parts[0] ?? ""];
    switch (kind) {
      case "workload":
        return parts.length === 2 ? { kind, workloadId: parts[1]! } : undefined;
      case "assignment":
      case "pending":
      case "status": {
        const index = Number(parts[2]);
        return parts.length === 3 && Number.isInteger(index) ? { kind, workloadId: parts[1]!, index } : undefined;
      }
      case "node":
      case "liveness":
        return parts.length === 2 ? { kind, nodeId: parts[1]! } : undefined;
      case "secret":
        return parts.length === 2 ? { kind, secretName: parts[1]! } : undefined;
      case "stray": {
        const index = Number(parts[3]);
        return parts.length === 4 && Number.isInteger(index)
          ? { kind, nodeId: parts[1]!, workloadId: parts[2]!, index }
          : undefined;
      }
      default:
        return undefined;
    }
  }
}

/** The runtime name of a replica: `<workload id>-<index>` (container, compose project, VM domain). */
export function replicaName(workloadId: string, index: number): string {
  return `${workloadId}-${index}`;
}
