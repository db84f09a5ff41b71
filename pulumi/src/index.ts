/**
 * `@persys/pulumi`: Persys workloads as Pulumi resources. The resources run through the provider
 * plugin `pulumi-resource-persys` (`@persys/provider`); the types match `schema/pulumi/schema.json`.
 *
 * ```ts
 * import * as persys from "@persys/pulumi";
 *
 * const web = new persys.Container("web", {
 *   image: "nginx:1.27",
 *   replicas: 2,
 *   ports: [{ container: 80, host: 8080 }],
 *   env: { LOG_LEVEL: "info" },
 * });
 * export const nodes = web.placements.apply((ps) => ps.map((p) => p.node));
 * const db = new persys.Secret("db", { data: { password: config.requireSecret("dbPassword") } });
 * export const plan = persys.getPlan({ kind: "vm", spec: { vcpus: 2, memoryMiB: 2048, imageName: "debian-12" } });
 * ```
 *
 * @packageDocumentation
 */
export { COMPOSE_STACK_INPUTS, ComposeStack, type ComposeStackArgs } from "./compose-stack.js";
export { CONTAINER_INPUTS, Container, type ContainerArgs } from "./container.js";
export {
  type GetNodesArgs,
  type GetNodesResult,
  type GetPlanArgs,
  type GetPlanResult,
  getNodes,
  getPlan,
} from "./functions.js";
export { PROVIDER_INPUTS, Provider, type ProviderArgs } from "./provider.js";
export { SECRET_INPUTS, SECRET_OUTPUTS, Secret, type SecretArgs } from "./secret.js";
export type * from "./types.js";
export { VIRTUAL_MACHINE_INPUTS, VirtualMachine, type VirtualMachineArgs } from "./virtual-machine.js";
export { WORKLOAD_INPUTS, WORKLOAD_OUTPUTS, type WorkloadArgs, type WorkloadOutputs } from "./workload-args.js";
