/**
 * The one registry of Persys error codes. Every error that crosses a process boundary carries one of
 * these codes; the registry decides its HTTP status, gRPC status, whether a client may retry it, and
 * the remediation text shown to people (also used by the intelligence layer as retrieval corpus).
 *
 * Adding a code: add it here only. `docs/errors.md` is checked against this table by a test.
 */

/** gRPC status codes (numeric, as on the wire), so `schema` does not depend on a gRPC runtime. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatus = (typeof GrpcStatus)[keyof typeof GrpcStatus];

export interface ErrorDefinition {
  /** HTTP status used by the REST API. */
  readonly http: number;
  /** gRPC status used by the gRPC APIs. */
  readonly grpc: GrpcStatus;
  /** Whether repeating the same request later can succeed without a change by the caller. */
  readonly retryable: boolean;
  /** One line: what the code means. */
  readonly summary: string;
  /** What a person can do about it. */
  readonly remediation: string;
}

const define = <T extends Record<string, ErrorDefinition>>(table: T) => table;

export const errorRegistry = define({
  INVALID_SPEC: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: "A workload spec is invalid.",
    remediation: "Fix the fields named in details and apply again.",
  },
  INVALID_ARGUMENT: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: "A request argument is invalid.",
    remediation: "Fix the arguments named in details.",
  },
  INVALID_CONFIG: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: "The configuration is invalid.",
    remediation: "Fix the configuration keys named in details (file, environment or flag).",
  },
  NOT_FOUND: {
    http: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: "The object does not exist.",
    remediation: "Check the name; list the objects to see what exists.",
  },
  ALREADY_EXISTS: {
    http: 409,
    grpc: GrpcStatus.ALREADY_EXISTS,
    retryable: false,
    summary: "An object with this name already exists.",
    remediation: "Use another name, or update the existing object.",
  },
  CONFLICT: {
    http: 409,
    grpc: GrpcStatus.ABORTED,
    retryable: true,
    summary: "The object changed concurrently.",
    remediation: "Read the object again and retry the change.",
  },
  COMPACTED: {
    http: 410,
    grpc: GrpcStatus.OUT_OF_RANGE,
    retryable: false,
    summary: "The requested revision has been compacted away.",
    remediation: "Read the current state and watch from its revision.",
  },
  UNSCHEDULABLE: {
    http: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: true,
    summary: "No node can run the workload now.",
    remediation:
      "Read the placement diagnosis: add capacity, relax the placement rules or free resources. " +
      "Persys retries when the cluster changes.",
  },
  IMAGE_NOT_FOUND: {
    http: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: "The container image is not on the node and no registry has it.",
    remediation: "Load or build the image on the node (docker load / docker import), or fix the image name.",
  },
  IMAGE_PULL_FAILED: {
    http: 502,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "Pulling the container image failed.",
    remediation: "Check the registry address, credentials and the node's network.",
  },
  PORT_CONFLICT: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: "A host port is already allocated on the node.",
    remediation: "Pick another host port, or stop what holds it.",
  },
  CONTAINER_EXITED: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    retryable: true,
    summary: "The container exited.",
    remediation: "Read the workload logs for the exit cause.",
  },
  OOM_KILLED: {
    http: 500,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    retryable: true,
    summary: "The workload was killed for exceeding its memory limit.",
    remediation: "Raise resources.memoryMiB or reduce the workload's memory use.",
  },
  UNHEALTHY: {
    http: 500,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "The workload's healthcheck fails.",
    remediation: "Read the healthcheck output in the workload events and logs.",
  },
  RUNTIME_UNAVAILABLE: {
    http: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "The node's runtime (Docker or libvirt) does not answer.",
    remediation: "Check the runtime daemon on the node; the node condition says which.",
  },
  RUNTIME_ERROR: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    retryable: true,
    summary: "The runtime reported an error.",
    remediation: "Read the message and the node's agent log.",
  },
  VM_BOOT_FAILED: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    retryable: true,
    summary: "The virtual machine did not boot.",
    remediation: "Read the console tail in the reason; check the base image and accelerator.",
  },
  VM_CRASHED: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    retryable: true,
    summary: "The virtual machine crashed.",
    remediation: "Read the console log of the VM.",
  },
  NODE_LOST: {
    http: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "The node running the replica stopped heartbeating.",
    remediation: "Persys re-places the replica after lostAfter; check the node.",
  },
  STORAGE_ERROR: {
    http: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "The state or event store failed.",
    remediation: "Check the store (etcd, Redis or the embedded data directory).",
  },
  NETWORK_ERROR: {
    http: 502,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "A network operation failed.",
    remediation: "Check connectivity between the control plane and the node.",
  },
  UNAUTHENTICATED: {
    http: 401,
    grpc: GrpcStatus.UNAUTHENTICATED,
    retryable: false,
    summary: "The caller is not authenticated.",
    remediation: "Present a client certificate or token issued by this cluster.",
  },
  PERMISSION_DENIED: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    retryable: false,
    summary: "The caller may not do this.",
    remediation: "Use an identity with the needed role, or change the cluster policy.",
  },
  UNAVAILABLE: {
    http: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: "The service is temporarily unavailable.",
    remediation: "Retry with backoff.",
  },
  DEADLINE_EXCEEDED: {
    http: 504,
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    retryable: true,
    summary: "The operation did not finish in time.",
    remediation: "Retry, or raise the timeout.",
  },
  CANCELLED: {
    http: 499,
    grpc: GrpcStatus.CANCELLED,
    retryable: false,
    summary: "The caller cancelled the operation.",
    remediation: "None needed.",
  },
  INTERNAL: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    retryable: false,
    summary: "An internal error.",
    remediation: "Report it with the server log line for this request.",
  },
  SECRET_NOT_FOUND: {
    http: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: true,
    summary: "A secret (or a key of it) that the workload references does not exist.",
    remediation:
      "Create the secret with the key (persysctl secret create); the replica starts once it exists. " +
      "The workload itself is accepted and waits.",
  },
  SECRET_IN_USE: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: "The secret is referenced by workloads and cannot be deleted.",
    remediation: "Remove the references (or delete the workloads named in the message) first, or delete with force.",
  },
});

export type ErrorCode = keyof typeof errorRegistry;

export const errorCodes = Object.keys(errorRegistry) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(errorRegistry, value);
}
