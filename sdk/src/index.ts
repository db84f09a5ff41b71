/**
 * `@persys/sdk`: the typed client of a Persys control plane, the workload builders, and the
 * spec-file parser shared by `persysctl` and the Pulumi provider.
 *
 * ```ts
 * import { PersysClient, WaitError, container } from "@persys/sdk";
 *
 * const client = PersysClient.fromEnvironment(); // PERSYS_ENDPOINT, ~/.persys/config.yaml, or 127.0.0.1:7070
 * const web = container({ id: "web", image: "nginx:1.27", replicas: 2, ports: [{ container: 80, host: 8080 }], memoryMiB: 256 });
 * await client.workloads.apply(web);
 * try {
 *   await client.workloads.waitFor("web", "running", { timeoutMs: 60_000 });
 * } catch (error) {
 *   if (error instanceof WaitError) console.error(error.message, error.explanation);
 *   throw error;
 * }
 * for await (const event of client.workloads.watch({ workloadId: "web" })) console.log(event.type);
 * client.close();
 * ```
 *
 * Every failure is a `PersysError` (`code`, `details` with field paths, `retryable`); the
 * SDK's own subclasses are {@link WaitError} and {@link SpecFileError}. `instanceof` works across
 * copies of the packages. Wire types are the generated `api` namespace of `@persys/schema`,
 * re-exported here.
 *
 * @packageDocumentation
 */

export {
  api,
  assertValidWorkload,
  type ErrorBody,
  type ErrorCode,
  errorCodes,
  errorRegistry,
  type FieldViolation,
  isErrorCode,
  MAX_APPLY_WORKLOADS,
  MAX_SECRET_BYTES,
  PersysError,
  secretKeyProblem,
  secretNameProblem,
  withDefaults,
  workloadRevision,
  workloadViolations,
} from "@persys/schema";
export { type AuditOptions, AutomationApi } from "./automation/automation-api.js";
export { policyFromDocument } from "./automation/policy-input.js";
export { type ComposeInput, compose, type GitSourceInput } from "./builders/compose-builder.js";
export {
  type ContainerInput,
  container,
  type PortInput,
  type RestartModeName,
  type VolumeInput,
} from "./builders/container-builder.js";
export type {
  EnforcementName,
  LabelExpressionInput,
  LabelOperatorName,
  LabelSelectorInput,
  PlacementInput,
} from "./builders/placement-input.js";
export { type VmDiskInput, type VmInput, vm } from "./builders/vm-builder.js";
export type { WorkloadInput } from "./builders/workload-input.js";
export type { CallOptions } from "./client/call-runner.js";
export {
  DEFAULT_ENDPOINT,
  DEFAULT_GRPC_PORT,
  type ParsedEndpoint,
  type Pem,
  type PersysClientOptions,
  parseEndpoint,
  type TlsOptions,
} from "./client/client-options.js";
export { type Page, PagedList, type WorkloadPage } from "./client/paged-list.js";
export { DEFAULT_TIMEOUT_MS, PersysClient, SDK_VERSION } from "./client/persys-client.js";
export type { ReconnectInfo, StreamOptions } from "./client/resumable-stream.js";
export { DEFAULT_RETRY, isRetryableCallError, type RetryOptions } from "./client/retry-policy.js";
export { ClusterApi } from "./cluster/cluster-api.js";
export {
  type ClientConfigFile,
  type ClientContext,
  defaultConfigPath,
  readClientConfig,
  saveContext,
  useContext,
} from "./config/client-config-file.js";
export {
  type DiscoveredClientOptions,
  type DiscoveryOptions,
  discoverClientOptions,
  type EndpointSource,
} from "./config/client-discovery.js";
export type {
  EventSeverityName,
  NodeStateName,
  ReplicaStateName,
  WorkloadKindName,
  WorkloadStateName,
  WorkloadViewName,
} from "./enums/enum-inputs.js";
export {
  enumLabel,
  enumMemberNames,
  friendlyEnumName,
  friendlyEnumNames,
  type NumericEnum,
  parseEnum,
  resolveEnumName,
} from "./enums/friendly-enums.js";
export { WaitError, type WaitOutcome } from "./errors/wait-error.js";
export {
  type EventFilterInput,
  EventsApi,
  type ListEventsOptions,
  type WatchEventsOptions,
} from "./events/events-api.js";
export {
  type ForecastMethodName,
  type ForecastOptions,
  IntelligenceApi,
  type WindowOptions,
} from "./intelligence/intelligence-api.js";
export { type DrainResult, type ListNodesOptions, NodesApi } from "./nodes/nodes-api.js";
export { SecretsApi, type SecretValues } from "./secrets/secrets-api.js";
export { type Identity, type IssuedCertificate, SecurityApi, type UserRoleName } from "./security/security-api.js";
export { type ReadSpecFilesOptions, readSpecFiles, SPEC_FILE_EXTENSIONS } from "./spec-file/read-spec-files.js";
export { parseSpecText, type SpecDocument } from "./spec-file/spec-document.js";
export { specDocumentOf, specFileText } from "./spec-file/spec-document-of.js";
export { formatProblem, SpecFileError, type SpecLocation, type SpecProblem } from "./spec-file/spec-file-error.js";
export { DEFAULT_WAIT_TIMEOUT_MS, describeProgress, type WaitOptions, type WaitTarget } from "./workloads/wait-for.js";
export type { WatchWorkloadsOptions, WorkloadWatchEvent } from "./workloads/workload-watch.js";
export {
  type ApplyOptions,
  type ApplyResult,
  type ListWorkloadsOptions,
  type LogsOptions,
  type RetryResult,
  WorkloadsApi,
} from "./workloads/workloads-api.js";
