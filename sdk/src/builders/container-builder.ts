import { api, type FieldViolation } from "@persys/schema";
import { parseEnum } from "../enums/friendly-enums.js";
import { checkKeys } from "./input-keys.js";
import { badEnum, finish, type WorkloadInput, workloadBase, workloadInputKeys } from "./workload-input.js";

/** A published port: `{ container: 80, host: 8080 }`. */
export interface PortInput {
  /** Port inside the container, 1..65535. */
  readonly container: number;
  /** Port published on the node, 1..65535. Unset: not published. */
  readonly host?: number | undefined;
  /** Default `tcp`. */
  readonly protocol?: "tcp" | "udp" | undefined;
  /** Host address to bind. Default: all. */
  readonly hostIp?: string | undefined;
}

/** A mount: a host path (bind mount) or a named Docker volume, at `containerPath`. */
export type VolumeInput =
  | { readonly hostPath: string; readonly containerPath: string; readonly readOnly?: boolean | undefined }
  | { readonly volume: string; readonly containerPath: string; readonly readOnly?: boolean | undefined };

/** Restart policy name. */
export type RestartModeName = "no" | "always" | "on-failure" | "unless-stopped";

/** A container workload in friendly form; see {@link container}. */
export interface ContainerInput extends WorkloadInput {
  /** Image reference, e.g. `nginx:1.27`. */
  readonly image: string;
  /** Replaces the image entrypoint. */
  readonly command?: readonly string[] | undefined;
  /** Replaces the image command (its arguments). */
  readonly args?: readonly string[] | undefined;
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Variables from secrets, resolved on the node: `{ DB_PASSWORD: { secret: "db", key: "password" } }`. */
  readonly secretEnv?:
    | Readonly<Record<string, { readonly secret: string; readonly key?: string | undefined }>>
    | undefined;
  readonly ports?: readonly PortInput[] | undefined;
  readonly volumes?: readonly VolumeInput[] | undefined;
  /** `on-failure` (the default), or `{ mode: "on-failure", maxRetries: 5 }`. */
  readonly restart?:
    | RestartModeName
    | { readonly mode: RestartModeName; readonly maxRetries?: number | undefined }
    | undefined;
  /** Command run in the container; exit 0 is healthy. */
  readonly healthcheck?:
    | {
        readonly command: readonly string[];
        readonly intervalSeconds?: number | undefined;
        readonly timeoutSeconds?: number | undefined;
        readonly retries?: number | undefined;
        readonly startPeriodSeconds?: number | undefined;
      }
    | undefined;
  /** `uid`, `uid:gid` or a user of the image. */
  readonly user?: string | undefined;
  readonly workingDir?: string | undefined;
  readonly privileged?: boolean | undefined;
  readonly hostNetwork?: boolean | undefined;
  /** Seconds between SIGTERM and SIGKILL on stop. Default 10. */
  readonly stopTimeoutSeconds?: number | undefined;
}

const containerKeys = [
  ...workloadInputKeys,
  "image",
  "command",
  "args",
  "env",
  "secretEnv",
  "ports",
  "volumes",
  "restart",
  "healthcheck",
  "user",
  "workingDir",
  "privileged",
  "hostNetwork",
  "stopTimeoutSeconds",
];

function restartOf(input: ContainerInput["restart"], violations: FieldViolation[]): api.RestartPolicy | undefined {
  if (input === undefined) return undefined;
  const { mode, maxRetries } = typeof input === "string" ? { mode: input, maxRetries: 0 } : input;
  const parsed = parseEnum(api.RestartPolicyMode, mode) ?? badEnum(violations, "container.restartPolicy.mode", mode);
  return { mode: parsed, maxRetries: maxRetries ?? 0 };
}

/**
 * A container workload (`api.Workload` with a `container` spec) from friendly input, with defaults
 * applied and validated before any network call:
 *
 * ```ts
 * container({ id: "web", image: "nginx:1.27", replicas: 2, ports: [{ container: 80, host: 8080 }], memoryMiB: 256 })
 * ```
 *
 * Pure: the same input gives the same workload (and revision).
 *
 * @throws PersysError INVALID_SPEC naming every bad field by its API path (`container.ports[0].hostPort`).
 */
export function container(input: ContainerInput): api.Workload {
  const violations: FieldViolation[] = [];
  checkKeys(input, containerKeys, "", violations);
  (input.ports ?? []).forEach((p, i) => {
    checkKeys(p, ["container", "host", "protocol", "hostIp"], `ports[${i}]`, violations);
  });
  (input.volumes ?? []).forEach((v, i) => {
    checkKeys(v, ["hostPath", "volume", "containerPath", "readOnly"], `volumes[${i}]`, violations);
  });
  const workload = workloadBase(input, api.WorkloadKind.WORKLOAD_KIND_CONTAINER, violations);
  const spec = api.ContainerSpec.fromPartial({
    image: input.image,
    command: [...(input.command ?? [])],
    args: [...(input.args ?? [])],
    env: { ...input.env },
    secretEnv: Object.fromEntries(
      Object.entries(input.secretEnv ?? {}).map(([name, ref]) => [name, { secret: ref.secret, key: ref.key ?? "" }]),
    ),
    ports: (input.ports ?? []).map((p, i) => ({
      containerPort: p.container,
      hostPort: p.host ?? 0,
      protocol:
        p.protocol === undefined
          ? api.Protocol.PROTOCOL_TCP
          : (parseEnum(api.Protocol, p.protocol) ?? badEnum(violations, `container.ports[${i}].protocol`, p.protocol)),
      hostIp: p.hostIp ?? "",
    })),
    volumes: (input.volumes ?? []).map((v) => ({
      source:
        "hostPath" in v && v.hostPath !== undefined
          ? { $case: "hostPath" as const, value: v.hostPath }
          : "volume" in v && v.volume !== undefined
            ? { $case: "volume" as const, value: v.volume }
            : undefined,
      containerPath: v.containerPath,
      readOnly: v.readOnly ?? false,
    })),
    restartPolicy: restartOf(input.restart, violations),
    healthcheck: input.healthcheck
      ? {
          command: [...input.healthcheck.command],
          intervalSeconds: input.healthcheck.intervalSeconds ?? 0,
          timeoutSeconds: input.healthcheck.timeoutSeconds ?? 0,
          retries: input.healthcheck.retries ?? 0,
          startPeriodSeconds: input.healthcheck.startPeriodSeconds ?? 0,
        }
      : undefined,
    user: input.user ?? "",
    workingDir: input.workingDir ?? "",
    privileged: input.privileged ?? false,
    hostNetwork: input.hostNetwork ?? false,
    stopTimeoutSeconds: input.stopTimeoutSeconds ?? 0,
  });
  return finish({ ...workload, spec: { $case: "container", value: spec } }, violations);
}
