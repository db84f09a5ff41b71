/**
 * The provider's functions (Pulumi invokes): `persys:index:getNodes` lists the cluster's nodes,
 * `persys:index:getPlan` dry-runs the placement of a workload and returns the scheduler's
 * diagnosis. Neither changes anything.
 */
import { api, enumLabel, type PersysClient, PersysError } from "@persys/sdk";
import type { CheckFailure } from "../plugin/provider-server.js";
import type { WorkloadKindName } from "../resources/resource-types.js";
import { inputPathOf, toWorkload } from "../resources/workload-inputs.js";

export const GET_NODES = "persys:index:getNodes";
export const GET_PLAN = "persys:index:getPlan";

const resources = (r: api.Resources | undefined) => ({
  cpuMillicores: r?.cpuMillicores ?? 0,
  memoryMiB: r?.memoryMib ?? 0,
  diskGiB: r?.diskGib ?? 0,
});

/** `getNodes({ labelSelector?, capability?, state? })` → `{ nodes: [...] }`, ordered by id. */
async function getNodes(client: PersysClient, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const nodes: Record<string, unknown>[] = [];
  const str = (key: string) => (typeof args[key] === "string" && args[key] !== "" ? (args[key] as string) : undefined);
  for await (const n of client.nodes.list({
    labelSelector: str("labelSelector"),
    capability: str("capability"),
    state: str("state") as never,
  })) {
    nodes.push({
      id: n.id,
      state: enumLabel(api.NodeState, n.state),
      cordoned: n.cordoned,
      labels: n.labels,
      capabilities: n.capabilities,
      kinds: n.supportedKinds.map((k) => enumLabel(api.WorkloadKind, k)),
      arch: n.arch,
      allocatable: resources(n.allocatable),
      allocated: resources(n.allocated),
      replicaCount: n.replicaCount,
    });
  }
  return { nodes };
}

const kinds: Record<string, WorkloadKindName> = {
  container: "container",
  compose: "compose",
  composestack: "compose",
  vm: "vm",
  virtualmachine: "vm",
};

/**
 * `getPlan({ kind, spec })` → `{ schedulable, revision, changed, replicas: [{ replica, action, node, message }], message }`.
 * `spec` holds the resource's inputs (`name`, `image`, ...) for `kind` `container`, `compose` or `vm`.
 */
async function getPlan(client: PersysClient, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const kind = kinds[String(args.kind ?? "").toLowerCase()];
  if (!kind)
    throw new PersysError("INVALID_ARGUMENT", `kind must be container, compose or vm, got ${String(args.kind)}`);
  const spec = (typeof args.spec === "object" && args.spec !== null ? args.spec : {}) as Record<string, unknown>;
  const plan = await client.workloads.plan(toWorkload(kind, spec));
  const replicas = plan.replicas.map((r) => ({
    replica: r.replicaIndex,
    action: enumLabel(api.PlanAction, r.action),
    node: r.nodeId,
    message: r.diagnosis?.message ?? "",
  }));
  const unplaced = replicas.filter((r) => !r.node && r.action !== "delete");
  return {
    schedulable: plan.schedulable,
    revision: plan.revision,
    changed: plan.changed,
    replicas,
    message: plan.schedulable
      ? replicas.map((r) => `replica ${r.replica} → ${r.node || "-"} (${r.action})`).join("; ")
      : unplaced.map((r) => `replica ${r.replica}: ${r.message}`).join("; "),
  };
}

/** Runs an invoke; bad arguments come back as failures (as check reports them), other errors throw. */
export async function invokeFunction(
  client: () => PersysClient,
  token: string,
  args: Record<string, unknown>,
): Promise<{ result: Record<string, unknown>; failures: CheckFailure[] }> {
  try {
    if (token === GET_NODES) return { result: await getNodes(client(), args), failures: [] };
    if (token === GET_PLAN) return { result: await getPlan(client(), args), failures: [] };
  } catch (error) {
    if (error instanceof PersysError && error.details.length > 0) {
      const prefix = token === GET_PLAN ? "spec." : "";
      return {
        result: {},
        failures: error.details.map((d) => ({ property: `${prefix}${inputPathOf(d.path)}`, reason: d.reason })),
      };
    }
    throw error;
  }
  throw new Error(`unknown function ${token}`);
}
