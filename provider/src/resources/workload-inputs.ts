/**
 * Pulumi inputs of the Persys resources and the API workloads they stand for.
 *
 * The inputs are the SDK builders' friendly inputs (`ContainerInput`, `ComposeInput`, `VmInput`)
 * with the workload id under `name` (Pulumi reserves `id`). {@link toWorkload} runs the SDK builder,
 * so validation and defaults are the SDK's; {@link inputsOf} is its inverse and writes the canonical
 * form: defaults left out, port and volume lists in a fixed order, enum values in their friendly
 * spelling. `inputsOf(toWorkload(x))` is what `check` stores, so two spellings of one workload
 * (defaults written out or not, ports in another order) are equal inputs and diff to nothing.
 */
import {
  api,
  type ComposeInput,
  type ContainerInput,
  compose,
  container,
  enumLabel,
  type PlacementInput,
  type VmInput,
  vm,
} from "@persys/sdk";
import type { WorkloadKindName } from "./resource-types.js";

/** Resource inputs as Pulumi passes them (plain JSON after secrets are unwrapped). */
export type Inputs = Record<string, unknown>;

/**
 * The workload for a resource's inputs, with defaults applied and validated by the SDK builder.
 *
 * @throws PersysError INVALID_SPEC naming every bad field by its API path.
 */
export function toWorkload(kind: WorkloadKindName, inputs: Inputs): api.Workload {
  const { name, ...rest } = inputs;
  const input = { ...rest, id: name } as never;
  if (kind === "container") return container(input as ContainerInput);
  if (kind === "compose") return compose(input as ComposeInput);
  return vm(input as VmInput);
}

/** Sets `key` unless the value is empty: undefined, "", 0, false, [] or {} (the proto3 zero values). */
function put(target: Inputs, key: string, value: unknown): void {
  if (value === undefined || value === "" || value === 0 || value === false) return;
  if (Array.isArray(value) && value.length === 0) return;
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) return;
  target[key] = value;
}

/** An object of the non-empty entries, keys sorted (maps compare by content, not insertion order). */
function compact(entries: Record<string, unknown>): Inputs {
  const out: Inputs = {};
  for (const key of Object.keys(entries).sort()) put(out, key, entries[key]);
  return out;
}

const sortedMap = (map: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

const byKey =
  <T>(key: (item: T) => string) =>
  (a: T, b: T): number =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

function expressionOf(e: api.LabelExpression): Inputs {
  return compact({ key: e.key, operator: enumLabel(api.LabelOperator, e.operator), values: e.values });
}

/** Placement in the builder's friendly form (the inverse of the SDK's `placementOf`). */
function placementInputOf(p: api.Placement | undefined): PlacementInput | undefined {
  if (!p) return undefined;
  const enforcement = (e: api.Enforcement) =>
    e === api.Enforcement.ENFORCEMENT_REQUIRED ? undefined : enumLabel(api.Enforcement, e);
  const out = compact({
    nodeSelector: sortedMap(p.nodeSelector),
    requiredCapabilities: [...p.requiredCapabilities].sort(),
    arch: p.arch,
    requiredNodeAffinity: p.requiredNodeAffinity.map(expressionOf),
    preferredNodeAffinity: p.preferredNodeAffinity.map((a) => ({
      ...(a.expression ? expressionOf(a.expression) : {}),
      weight: a.weight,
    })),
    replicaAntiAffinity: p.replicaAntiAffinity
      ? compact({
          enforcement: enforcement(p.replicaAntiAffinity.enforcement),
          topologyKey: p.replicaAntiAffinity.topologyKey,
          weight: p.replicaAntiAffinity.weight,
        })
      : undefined,
    workloadAntiAffinity: p.workloadAntiAffinity.map((rule) =>
      compact({
        selector: compact({
          matchLabels: sortedMap(rule.workloadSelector?.matchLabels ?? {}),
          matchExpressions: (rule.workloadSelector?.matchExpressions ?? []).map(expressionOf),
        }),
        enforcement: enforcement(rule.enforcement),
        topologyKey: rule.topologyKey,
        weight: rule.weight,
      }),
    ),
    spread: p.spread.map((rule) =>
      compact({
        topologyKey: rule.topologyKey,
        maxSkew: rule.maxSkew === 1 ? 0 : rule.maxSkew,
        enforcement: enforcement(rule.enforcement),
      }),
    ),
  });
  // An empty replicaAntiAffinity ({}) means "required, per node": keep it, compact would drop it.
  if (p.replicaAntiAffinity && !out.replicaAntiAffinity) out.replicaAntiAffinity = {};
  return Object.keys(out).length ? (out as PlacementInput) : undefined;
}

function containerInputsOf(spec: api.ContainerSpec): Inputs {
  const restart = spec.restartPolicy;
  const defaultRestart =
    !restart ||
    (restart.mode === api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE && restart.maxRetries === 0) ||
    restart.mode === api.RestartPolicyMode.RESTART_POLICY_MODE_UNSPECIFIED;
  return {
    image: spec.image,
    command: spec.command,
    args: spec.args,
    env: sortedMap(spec.env),
    secretEnv: Object.fromEntries(
      Object.entries(spec.secretEnv)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, ref]) => [k, compact({ secret: ref.secret, key: ref.key })]),
    ),
    ports: spec.ports
      .map((p) =>
        compact({
          container: p.containerPort,
          host: p.hostPort,
          protocol: p.protocol === api.Protocol.PROTOCOL_UDP ? "udp" : undefined,
          hostIp: p.hostIp,
        }),
      )
      .sort(byKey((p) => JSON.stringify([p.container, p.protocol ?? "", p.host ?? 0, p.hostIp ?? ""]))),
    volumes: spec.volumes
      .map((v) =>
        compact({
          hostPath: v.source?.$case === "hostPath" ? v.source.value : undefined,
          volume: v.source?.$case === "volume" ? v.source.value : undefined,
          containerPath: v.containerPath,
          readOnly: v.readOnly,
        }),
      )
      .sort(byKey((v) => String(v.containerPath))),
    restart: defaultRestart
      ? undefined
      : compact({ mode: enumLabel(api.RestartPolicyMode, restart.mode), maxRetries: restart.maxRetries }),
    healthcheck: spec.healthcheck?.command.length
      ? compact({ ...spec.healthcheck, command: spec.healthcheck.command })
      : undefined,
    user: spec.user,
    workingDir: spec.workingDir,
    privileged: spec.privileged,
    hostNetwork: spec.hostNetwork,
    stopTimeoutSeconds: spec.stopTimeoutSeconds === 10 ? 0 : spec.stopTimeoutSeconds,
  };
}

function composeInputsOf(spec: api.ComposeSpec): Inputs {
  const source = spec.source;
  return {
    inlineYaml: source?.$case === "inlineYaml" ? source.value : undefined,
    git: source?.$case === "git" ? compact({ ...source.value }) : undefined,
    env: sortedMap(spec.env),
    profiles: [...spec.profiles].sort(),
    projectName: spec.projectName,
  };
}

function vmInputsOf(spec: api.VmSpec): Inputs {
  return {
    vcpus: spec.vcpus,
    memoryMiB: spec.memoryMib,
    imageName: spec.baseImage?.$case === "imageName" ? spec.baseImage.value : undefined,
    imagePath: spec.baseImage?.$case === "imagePath" ? spec.baseImage.value : undefined,
    disks: spec.disks.map((d) =>
      compact({
        name: d.name,
        sizeGiB: d.sizeGib,
        pool: d.pool,
        format: d.format === api.DiskFormat.DISK_FORMAT_RAW ? "raw" : undefined,
        boot: d.boot,
      }),
    ),
    cloudInit: spec.cloudInit ? compact({ ...spec.cloudInit }) : undefined,
    networks: spec.networks.map((n) => compact({ ...n })),
    accelerator:
      spec.accelerator === api.Accelerator.ACCELERATOR_AUTO || spec.accelerator === 0
        ? undefined
        : enumLabel(api.Accelerator, spec.accelerator),
    machineType: spec.machineType,
  };
}

/**
 * The canonical inputs of a workload: what a program would write to declare exactly it, defaults
 * left out. Used by `read` (so `pulumi import` gets inputs that diff to nothing) and by `check`.
 */
export function inputsOf(workload: api.Workload): Inputs {
  const spec = workload.spec;
  const specInputs =
    spec?.$case === "container"
      ? containerInputsOf(spec.value)
      : spec?.$case === "compose"
        ? composeInputsOf(spec.value)
        : spec?.$case === "vm"
          ? vmInputsOf(spec.value)
          : {};
  const r = workload.resources ?? { cpuMillicores: 0, memoryMib: 0, diskGib: 0 };
  // VMs reserve vcpus × 1000 millicores, their memory and the sum of their disks unless told otherwise.
  const vmSpec = spec?.$case === "vm" ? spec.value : undefined;
  const derivedCpu = vmSpec ? Math.round(vmSpec.vcpus * 1000) : 0;
  const derivedDisk = vmSpec ? vmSpec.disks.reduce((sum, d) => sum + d.sizeGib, 0) : 0;
  const strategy = workload.updateStrategy;
  const update =
    strategy && (strategy.type === api.UpdateStrategyType.UPDATE_STRATEGY_TYPE_RECREATE || strategy.maxUnavailable > 1)
      ? compact({
          strategy: strategy.type === api.UpdateStrategyType.UPDATE_STRATEGY_TYPE_RECREATE ? "recreate" : undefined,
          maxUnavailable: strategy.maxUnavailable > 1 ? strategy.maxUnavailable : undefined,
        })
      : undefined;
  const common: Record<string, unknown> = {
    name: workload.id,
    replicas: workload.replicas === undefined || workload.replicas === 1 ? undefined : workload.replicas,
    cpuMillicores: r.cpuMillicores === derivedCpu ? undefined : r.cpuMillicores,
    memoryMiB: vmSpec ? undefined : r.memoryMib,
    diskGiB: r.diskGib === derivedDisk ? undefined : r.diskGib,
    labels: sortedMap(workload.labels),
    placement: placementInputOf(workload.placement),
    desiredState: workload.desiredState === api.DesiredState.DESIRED_STATE_STOPPED ? "stopped" : undefined,
    update,
  };
  const out = compact({ ...common, ...specInputs });
  // replicas: 0 is meaningful (keep the workload, run nothing), unlike the other zero values.
  if (workload.replicas === 0) out.replicas = 0;
  return out;
}

/** Validates and canonicalises inputs: `inputsOf(toWorkload(kind, inputs))`. Throws as {@link toWorkload}. */
export function canonicalInputs(kind: WorkloadKindName, inputs: Inputs): Inputs {
  return inputsOf(toWorkload(kind, inputs));
}

/** API field names that the inputs spell differently (per path segment). */
const inputNames: Readonly<Record<string, string>> = {
  id: "name",
  hostPort: "host",
  containerPort: "container",
  restartPolicy: "restart",
  memoryMib: "memoryMiB",
  sizeGib: "sizeGiB",
  diskGib: "diskGiB",
  updateStrategy: "update",
  baseImage: "imageName",
  workloadSelector: "selector",
};

/**
 * The input property path of an API field path, for check failures:
 * `container.ports[0].hostPort` → `ports[0].host`, `resources.memoryMib` → `memoryMiB`, `id` → `name`.
 */
export function inputPathOf(apiPath: string): string {
  const withoutSpec = apiPath.replace(/^(container|compose|vm)(\.|$)/, "").replace(/^resources\./, "");
  const path = withoutSpec
    .split(".")
    .map((segment) => {
      const m = /^([^[]+)(.*)$/.exec(segment);
      return m ? `${inputNames[m[1]!] ?? m[1]}${m[2]}` : segment;
    })
    .join(".");
  return path || apiPath;
}
