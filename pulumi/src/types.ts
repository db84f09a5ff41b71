/**
 * Input and output types of the Persys resources, as in the package schema (`schema/pulumi/schema.json`,
 * `types`). Input types accept `pulumi.Input` values at every level.
 */
import type * as pulumi from "@pulumi/pulumi";

type In<T> = pulumi.Input<T>;

export interface PortArgs {
  /** Port inside the container, 1..65535. */
  container: In<number>;
  /** Port published on the node. Unset: not published. A fixed host port makes a replacement delete first. */
  host?: In<number>;
  /** `tcp` (the default) or `udp`. */
  protocol?: In<"tcp" | "udp">;
  /** Host address to bind. Default: all. */
  hostIp?: In<string>;
}

export interface VolumeArgs {
  /** Host path (bind mount); one of hostPath and volume. */
  hostPath?: In<string>;
  /** Named Docker volume. */
  volume?: In<string>;
  containerPath: In<string>;
  readOnly?: In<boolean>;
}

export interface SecretKeyRefArgs {
  secret: In<string>;
  key?: In<string>;
}

export interface RestartPolicyArgs {
  mode: In<"no" | "always" | "on-failure" | "unless-stopped">;
  /** on-failure only: give up after this many restarts (0: never). */
  maxRetries?: In<number>;
}

export interface HealthcheckArgs {
  /** Exit 0 is healthy. */
  command: In<In<string>[]>;
  intervalSeconds?: In<number>;
  timeoutSeconds?: In<number>;
  retries?: In<number>;
  startPeriodSeconds?: In<number>;
}

export interface GitSourceArgs {
  repo: In<string>;
  ref?: In<string>;
  /** Default `compose.yaml`. */
  path?: In<string>;
  credentialsSecret?: In<string>;
}

export interface VmDiskArgs {
  name: In<string>;
  sizeGiB: In<number>;
  pool?: In<string>;
  format?: In<"qcow2" | "raw">;
  boot?: In<boolean>;
}

export interface CloudInitArgs {
  userData?: In<string>;
  metaData?: In<string>;
  networkConfig?: In<string>;
}

export interface VmNetworkArgs {
  network: In<string>;
  mac?: In<string>;
}

export interface UpdateStrategyArgs {
  strategy?: In<"rolling" | "recreate">;
  maxUnavailable?: In<number>;
}

export interface LabelExpressionArgs {
  key: In<string>;
  /** `In`, `NotIn`, `Exists`, `DoesNotExist` (or kebab-case). */
  operator: In<string>;
  values?: In<In<string>[]>;
}

export interface WeightedLabelExpressionArgs extends LabelExpressionArgs {
  /** 1..100. */
  weight: In<number>;
}

export interface LabelSelectorArgs {
  matchLabels?: In<Record<string, In<string>>>;
  matchExpressions?: In<In<LabelExpressionArgs>[]>;
}

export interface ReplicaAntiAffinityArgs {
  enforcement?: In<"required" | "preferred">;
  topologyKey?: In<string>;
  weight?: In<number>;
}

export interface WorkloadAntiAffinityArgs extends ReplicaAntiAffinityArgs {
  selector: In<LabelSelectorArgs>;
}

export interface SpreadArgs {
  topologyKey: In<string>;
  maxSkew?: In<number>;
  enforcement?: In<"required" | "preferred">;
}

export interface PlacementArgs {
  nodeSelector?: In<Record<string, In<string>>>;
  requiredCapabilities?: In<In<string>[]>;
  arch?: In<string>;
  requiredNodeAffinity?: In<In<LabelExpressionArgs>[]>;
  preferredNodeAffinity?: In<In<WeightedLabelExpressionArgs>[]>;
  /** `{}`: never two replicas on one node. */
  replicaAntiAffinity?: In<ReplicaAntiAffinityArgs>;
  workloadAntiAffinity?: In<In<WorkloadAntiAffinityArgs>[]>;
  spread?: In<In<SpreadArgs>[]>;
}

/** Where one replica runs (or, in a preview, would run) and why. */
export interface ReplicaPlacement {
  replica: number;
  /** Empty while unplaced. */
  node: string;
  /** Replica state; in a preview the planned action (`create`, `replace`, `keep`). */
  state: string;
  reason: string;
}

/** A way to reach a replica. */
export interface Endpoint {
  replica: number;
  /** `published-port` or `vm-address`. */
  kind: string;
  address: string;
  port: number;
  targetPort: number;
  protocol: string;
  network: string;
}

export interface NodeResources {
  cpuMillicores: number;
  memoryMiB: number;
  diskGiB: number;
}

export interface NodeInfo {
  id: string;
  state: string;
  cordoned: boolean;
  labels: Record<string, string>;
  capabilities: string[];
  kinds: string[];
  arch: string;
  allocatable: NodeResources;
  allocated: NodeResources;
  replicaCount: number;
}

export interface ReplicaPlan {
  replica: number;
  /** `create`, `replace`, `keep` or `delete`. */
  action: string;
  node: string;
  message: string;
}
