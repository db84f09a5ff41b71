/**
 * The proto3 JSON shapes of `persys.api.v1` the console reads (a subset; see /v1/openapi.json).
 * Defaults are omitted on the wire, so every field is optional. Written by hand because the browser
 * sees JSON, not the ts-proto classes of @persys/schema.
 */

export interface ResourcesJson {
  cpuMillicores?: number;
  memoryMib?: number;
  diskGib?: number;
}

export interface ConditionJson {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionAt?: string;
}

export interface NodeJson {
  id: string;
  labels?: Record<string, string>;
  state?: string;
  cordoned?: boolean;
  draining?: boolean;
  cordonReason?: string;
  capacity?: ResourcesJson;
  allocatable?: ResourcesJson;
  allocated?: ResourcesJson;
  usage?: ResourcesJson;
  capabilities?: string[];
  supportedKinds?: string[];
  arch?: string;
  os?: string;
  agentVersion?: string;
  agentEndpoint?: string;
  replicaCount?: number;
  conditions?: ConditionJson[];
  registeredAt?: string;
  lastHeartbeatAt?: string;
}

export interface ReasonJson {
  code?: string;
  message?: string;
  retryable?: boolean;
  nextRetryAt?: string;
  attempts?: number;
  since?: string;
}

export interface FilterCountJson {
  plugin?: string;
  reason?: string;
  count?: number;
}

export interface ResourceExhaustionJson {
  dimension?: string;
  needed?: number;
  bestAvailable?: number;
  unit?: string;
  nodesShort?: number;
}

export interface PluginScoreJson {
  plugin?: string;
  score?: number;
  weight?: number;
}

export interface CandidateScoreJson {
  nodeId?: string;
  totalScore?: number;
  scores?: PluginScoreJson[];
}

/** One filter that refused one node (persys.api.v1.FilterFailure). */
export interface FilterFailureJson {
  plugin?: string;
  reason?: string;
  /** The numbers or facts behind it: "need 512 MiB, free 256 MiB of 8192 MiB", "kvm". */
  detail?: string;
}

/** What the scheduler's filters said on one node in one decision (persys.api.v1.NodeVerdict). */
export interface NodeVerdictJson {
  nodeId?: string;
  feasible?: boolean;
  failures?: FilterFailureJson[];
}

export interface PlacementDiagnosisJson {
  nodesEvaluated?: number;
  feasibleNodes?: number;
  scoredNodes?: number;
  filterCounts?: FilterCountJson[];
  exhaustion?: ResourceExhaustionJson[];
  candidates?: CandidateScoreJson[];
  winnerNodeId?: string;
  message?: string;
  decidedAt?: string;
  /** The recorded nodes (at most 64, 16 for a placement), in the scheduler's order: scored nodes best first, then refused ones. */
  nodes?: NodeVerdictJson[];
}

export interface EndpointJson {
  kind?: string;
  address?: string;
  port?: number;
  targetPort?: number;
  protocol?: string;
  network?: string;
}

export interface ReplicaStatusJson {
  index?: number;
  name?: string;
  nodeId?: string;
  state?: string;
  reason?: ReasonJson;
  endpoints?: EndpointJson[];
  observedRevision?: string;
  placement?: PlacementDiagnosisJson;
  restartCount?: number;
  startedAt?: string;
  lastTransitionAt?: string;
}

export interface WorkloadStatusJson {
  revision?: string;
  generation?: number;
  observedGeneration?: number;
  state?: string;
  readyReplicas?: number;
  replicas?: ReplicaStatusJson[];
  conditions?: ConditionJson[];
  createdAt?: string;
  updatedAt?: string;
}

export interface LabelExpressionJson {
  key?: string;
  operator?: string;
  values?: string[];
}

export interface PlacementJson {
  nodeSelector?: Record<string, string>;
  requiredNodeAffinity?: LabelExpressionJson[];
  replicaAntiAffinity?: { enforcement?: string; topologyKey?: string; weight?: number };
  requiredCapabilities?: string[];
  arch?: string;
  [other: string]: unknown;
}

export interface PortMappingJson {
  containerPort?: number;
  hostPort?: number;
  protocol?: string;
  hostIp?: string;
}

export interface WorkloadJson {
  id: string;
  kind?: string;
  replicas?: number;
  resources?: ResourcesJson;
  placement?: PlacementJson;
  desiredState?: string;
  labels?: Record<string, string>;
  container?: { image?: string; ports?: PortMappingJson[]; [other: string]: unknown };
  compose?: Record<string, unknown>;
  vm?: Record<string, unknown>;
  status?: WorkloadStatusJson;
  [other: string]: unknown;
}

export interface EventJson {
  id: string;
  time?: string;
  severity?: string;
  type?: string;
  workloadId?: string;
  replicaIndex?: number;
  nodeId?: string;
  message?: string;
  code?: string;
  attributes?: Record<string, string>;
}

export interface ListNodesResponseJson {
  nodes?: NodeJson[];
  nextPageToken?: string;
}

export interface ListWorkloadsResponseJson {
  workloads?: WorkloadJson[];
  nextPageToken?: string;
  storeRevision?: number;
}

export interface WatchWorkloadsResponseJson {
  type?: string;
  workload?: WorkloadJson;
  storeRevision?: number;
}

export interface ListEventsResponseJson {
  events?: EventJson[];
  nextPageToken?: string;
}

export interface ReplicaExplanationJson {
  replicaIndex?: number;
  state?: string;
  nodeId?: string;
  reason?: ReasonJson;
  diagnosis?: PlacementDiagnosisJson;
}

export interface ExplainWorkloadResponseJson {
  workloadId?: string;
  revision?: string;
  replicas?: ReplicaExplanationJson[];
}

export interface ReplicaPlanJson {
  replicaIndex?: number;
  action?: string;
  nodeId?: string;
  diagnosis?: PlacementDiagnosisJson;
}

export interface PlanWorkloadResponseJson {
  workload?: WorkloadJson;
  revision?: string;
  changed?: boolean;
  replicas?: ReplicaPlanJson[];
  schedulable?: boolean;
}

export interface LogLineJson {
  replicaIndex?: number;
  stream?: string;
  line?: string;
  time?: string;
  service?: string;
  nodeId?: string;
}

export interface ClusterSummaryJson {
  [field: string]: unknown;
}

/** The one error body of the API: `{code, message, details: [{path, reason}], retryable}`. */
export interface ErrorBodyJson {
  code?: string;
  message?: string;
  details?: { path?: string; reason?: string }[];
  retryable?: boolean;
}

export interface WatchEventsResponseJson {
  event?: EventJson;
}
