import { type agent, type api, composeError, invalid, readCompose, stackResources } from "@persys/schema";

/** Where a stack's compose file comes from. */
export type ComposeFileSource =
  | { readonly kind: "inline"; readonly yaml: string }
  | {
      readonly kind: "git";
      readonly repo: string;
      /** Empty: the default branch. */
      readonly ref: string;
      /** Path of the file inside the repository ("compose.yaml" when the spec leaves it empty). */
      readonly path: string;
      readonly refreshToken: string;
    };

/** A compose replica as the compose driver deploys it (one Compose project on this node). */
export interface ComposeRuntimeSpec {
  /** The Compose project name: containers, networks and volumes are named and labelled after it. */
  readonly project: string;
  readonly source: ComposeFileSource;
  /** Interpolation variables (over the project's `.env`). */
  readonly env: Readonly<Record<string, string>>;
  readonly profiles: readonly string[];
  /** Delete also removes the project's (non-external) named volumes. */
  readonly removeVolumes: boolean;
  /** The workload's labels, put on every container (`persys.*` keys are reserved). */
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * The compose runtime spec of replica `index` of a workload. The project is `projectName`
 * (suffixed `-<index>` for replicas after the first, so replicas sharing a node never share a
 * project), else `<workload id>-<index>`.
 *
 * Throws INVALID_SPEC for a credentials secret: secrets do not exist yet (issue 9), and cloning
 * anonymously instead would hide the problem.
 */
export function composeRuntimeSpec(spec: api.ComposeSpec, workload: api.Workload, index: number): ComposeRuntimeSpec {
  const source = spec.source;
  if (source?.$case === "git" && source.value.credentialsSecret) {
    throw invalid(
      "INVALID_SPEC",
      [
        {
          path: "persys.workload.compose.git.credentialsSecret",
          reason: "secret references cannot be resolved yet (secrets arrive with issue 9); use an anonymous URL",
        },
      ],
      `compose workload ${workload.id}`,
    );
  }
  const project = spec.projectName
    ? index === 0
      ? spec.projectName
      : `${spec.projectName}-${index}`
    : `${workload.id}-${index}`;
  return {
    project,
    source:
      source?.$case === "git"
        ? {
            kind: "git",
            repo: source.value.repo,
            ref: source.value.ref,
            path: source.value.path || "compose.yaml",
            refreshToken: source.value.refreshToken,
          }
        : { kind: "inline", yaml: source?.$case === "inlineYaml" ? source.value : "" },
    env: spec.env,
    profiles: spec.profiles,
    removeVolumes: spec.removeVolumesOnDelete,
    labels: Object.fromEntries(Object.entries(workload.labels).filter(([k]) => !k.startsWith("persys."))),
  };
}

/** `compose_yaml` of a Go request: base64 (as the Go scheduler sends it) or plain YAML. */
function goYaml(text: string): string {
  const compact = text.replace(/\s+/g, "");
  if (compact && /^[A-Za-z0-9+/]+={0,2}$/.test(compact) && compact.length % 4 === 0) {
    const decoded = Buffer.from(compact, "base64").toString("utf8");
    if (!decoded.includes("\uFFFD") && /services\s*:/.test(decoded)) return decoded;
  }
  return text;
}

/**
 * The compose runtime spec of a Go scheduler's request (`agent.v1.ComposeSpec`: project name,
 * compose file as base64 or YAML, env), validated with the same parser (paths under
 * `spec.compose.compose_yaml`), with the stack's summed resources. Throws INVALID_SPEC.
 */
export function composeFromGo(request: agent.ApplyWorkloadRequest): {
  spec: ComposeRuntimeSpec;
  resources: { cpuMillicores: number; memoryMib: number; diskGib: number };
} {
  const c = request.spec?.spec?.$case === "compose" ? request.spec.spec.value : undefined;
  const subject = `workload ${request.id || "(no id)"}`;
  if (!c) throw invalid("INVALID_SPEC", [{ path: "spec.compose", reason: "is required" }], subject);
  const yaml = goYaml(c.composeYaml);
  const result = readCompose({ file: "compose_yaml", content: yaml, env: c.env });
  if (!result.ok) throw composeError("compose_yaml", result.violations, "spec.compose.compose_yaml");
  const project = (c.projectName || request.id).toLowerCase().replace(/[^a-z0-9_-]/g, "-");
  return {
    spec: { project, source: { kind: "inline", yaml }, env: c.env, profiles: [], removeVolumes: false, labels: {} },
    resources: stackResources(result.project),
  };
}
