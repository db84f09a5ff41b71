/**
 * `@persys/provider`: the Pulumi resource provider plugin `pulumi-resource-persys`, a thin adapter
 * over `@persys/sdk`. The Pulumi engine runs it as a process (`dist/cmd/pulumi-resource-persys.js`);
 * programs use the typed classes of `@persys/pulumi`. See docs/pulumi.md.
 *
 * ```ts
 * import { PersysProvider, serveResourceProvider, writePluginLauncher } from "@persys/provider";
 *
 * // Package the built plugin for a project (`plugins.providers: [{ name: persys, path: ./plugin }]`):
 * writePluginLauncher({ dir: "./plugin", entry: "/abs/provider/dist/cmd/pulumi-resource-persys.js" });
 * // Or serve it from your own entry module:
 * await serveResourceProvider(new PersysProvider());
 * ```
 *
 * @packageDocumentation
 */
export { CONFIG_KEYS, clientOptionsOf, type ProviderConfig, SECRET_CONFIG_KEYS } from "./config/provider-config.js";
export { GET_NODES, GET_PLAN } from "./functions/provider-functions.js";
export { autoName, PersysProvider, PROVIDER_VERSION, packageSchema, secretPropertiesOf } from "./persys-provider.js";
export {
  PERSYS_PACKAGE,
  type PluginLauncherOptions,
  pluginExecutableName,
  writePluginLauncher,
} from "./plugin/plugin-launcher.js";
export {
  type CheckFailure,
  type OperationOptions,
  type ResourceHandler,
  resourceProviderService,
  serveResourceProvider,
} from "./plugin/provider-server.js";
export { type ProviderPlugin, serveProviderPlugin } from "./plugin/serve.js";
export {
  COMPOSE_STACK_TYPE,
  CONTAINER_TYPE,
  SECRET_TYPE,
  VIRTUAL_MACHINE_TYPE,
  type WorkloadKindName,
} from "./resources/resource-types.js";
export {
  checkSecretInputs,
  diffSecretInputs,
  NOT_READABLE,
  SECRET_INPUTS,
  SECRET_OUTPUT_ONLY,
  SECRET_PROPERTIES,
  SecretLifecycle,
} from "./resources/secret-resource.js";
export { diffInputs, type InputsDiff, immutableInputs, type PropertyChange } from "./resources/workload-diff.js";
export { canonicalInputs, type Inputs, inputPathOf, inputsOf, toWorkload } from "./resources/workload-inputs.js";
export { DEFAULT_OPERATION_TIMEOUT_MS, diagnosisOf, WorkloadLifecycle } from "./resources/workload-lifecycle.js";
export { type EndpointOutput, OUTPUT_ONLY, outputsOf, type PlacementOutput } from "./resources/workload-outputs.js";
