/**
 * The Pulumi resource types the provider serves and the workload kind behind each. The tokens are
 * the ones in `schema/pulumi/schema.json`.
 */
import { api } from "@persys/sdk";

/** A workload kind as the provider names it. */
export type WorkloadKindName = "container" | "compose" | "vm";

export const CONTAINER_TYPE = "persys:index:Container";
export const COMPOSE_STACK_TYPE = "persys:index:ComposeStack";
export const VIRTUAL_MACHINE_TYPE = "persys:index:VirtualMachine";
/** A Persys secret (not a workload; see `secret-resource.ts`). */
export const SECRET_TYPE = "persys:index:Secret";

/** Type token → workload kind. */
export const resourceKinds: Readonly<Record<string, WorkloadKindName>> = {
  [CONTAINER_TYPE]: "container",
  [COMPOSE_STACK_TYPE]: "compose",
  [VIRTUAL_MACHINE_TYPE]: "vm",
};

/** The API enum of a kind. */
export const apiKinds: Readonly<Record<WorkloadKindName, api.WorkloadKind>> = {
  container: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: api.WorkloadKind.WORKLOAD_KIND_VM,
};

/** The type token of a URN (`urn:pulumi:stack::project::persys:index:Container::web` → the token). */
export function typeOfUrn(urn: string): string {
  const parts = urn.split("::");
  const qualified = parts[2] ?? "";
  // A parent chain is written `parent$child`; the resource's own type is the last one.
  return qualified.split("$").at(-1) ?? "";
}

/** The resource name of a URN (its last `::` segment). */
export function nameOfUrn(urn: string): string {
  return urn.split("::").at(-1) ?? "";
}

/**
 * The workload kind of a URN's type.
 *
 * @throws Error `unknown resource type <token>` for a type this provider does not serve.
 */
export function kindOfUrn(urn: string): WorkloadKindName {
  const type = typeOfUrn(urn);
  const kind = resourceKinds[type];
  if (!kind) throw new Error(`unknown resource type ${type}`);
  return kind;
}
