/**
 * A Compose project after parsing, interpolation, profile selection and validation: the shape the
 * agent deploys and the control plane sums resources from. Every field has its default written out,
 * so two files that mean the same thing give equal models (and equal service config hashes).
 */

export type DependencyCondition = "service_started" | "service_healthy" | "service_completed_successfully";

export interface ComposeDependency {
  readonly condition: DependencyCondition;
  /** `required: false`: a missing or disabled dependency is skipped instead of refused. */
  readonly required: boolean;
  /** `restart: true`: restart this service when the dependency is recreated. */
  readonly restart: boolean;
}

export interface ComposePort {
  /** Container port. */
  readonly target: number;
  /** Host port; 0: an ephemeral port Docker picks (`ports: ["80"]`). */
  readonly published: number;
  readonly protocol: "tcp" | "udp";
  /** Empty: every address. */
  readonly hostIp: string;
}

export interface ComposeMount {
  /** `volume`: a named (project) volume or an anonymous one (empty source); `bind`: a host path. */
  readonly type: "volume" | "bind" | "tmpfs";
  /** Volume name as written in the file (not yet prefixed with the project), or an absolute host path. */
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
}

export interface ComposeHealthcheck {
  /** Docker's form: `["CMD", ...]`, `["CMD-SHELL", "..."]` or `["NONE"]` (disabled). */
  readonly test: readonly string[];
  /** 0: Docker's default. */
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly startPeriodMs: number;
  readonly retries: number;
}

export interface ComposeResources {
  /** CPUs, fractional (`0.5`); 0: none. */
  readonly cpus: number;
  readonly memoryBytes: number;
}

export type ComposeRestart = "no" | "always" | "on-failure" | "unless-stopped";

export interface ComposeServiceNetwork {
  readonly aliases: readonly string[];
}

export interface ComposeService {
  readonly name: string;
  readonly image: string;
  /** Undefined: the image's. */
  readonly command?: readonly string[];
  readonly entrypoint?: readonly string[];
  /** Interpolated, with env_file values below `environment` ones. */
  readonly environment: Readonly<Record<string, string>>;
  readonly ports: readonly ComposePort[];
  readonly expose: readonly string[];
  readonly dependsOn: Readonly<Record<string, ComposeDependency>>;
  readonly healthcheck?: ComposeHealthcheck;
  readonly restart: ComposeRestart;
  /** `on-failure` only; 0: unlimited. */
  readonly restartMaxRetries: number;
  readonly replicas: number;
  readonly limits: ComposeResources;
  readonly reservations: ComposeResources;
  readonly labels: Readonly<Record<string, string>>;
  readonly volumes: readonly ComposeMount[];
  /** Project network names (as in the file) with the service's aliases. */
  readonly networks: Readonly<Record<string, ComposeServiceNetwork>>;
  /** `host` or `none`, or empty for the project networks. */
  readonly networkMode: "" | "host" | "none";
  readonly workingDir: string;
  readonly user: string;
  readonly hostname: string;
  readonly stopGracePeriodMs: number;
  readonly stopSignal: string;
  readonly tty: boolean;
  readonly stdinOpen: boolean;
  readonly privileged: boolean;
  readonly init: boolean;
  readonly readOnly: boolean;
  readonly capAdd: readonly string[];
  readonly capDrop: readonly string[];
  readonly extraHosts: readonly string[];
  readonly tmpfs: readonly string[];
}

export interface ComposeNetwork {
  /** Name as written in the file. */
  readonly key: string;
  /** `external: true`: must exist, never created or removed. */
  readonly external: boolean;
  /** Docker name: `name:` when given (and for external networks), else `<project>_<key>`. */
  readonly name?: string;
  readonly driver: string;
  readonly internal: boolean;
  readonly labels: Readonly<Record<string, string>>;
}

export interface ComposeVolume {
  readonly key: string;
  readonly external: boolean;
  readonly name?: string;
  readonly driver: string;
  readonly driverOpts: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
}

/** A key Persys read but does not act on (see docs/compose.md, "Unsupported keys"). */
export interface ComposeWarning {
  readonly path: string;
  readonly message: string;
}

export interface ComposeProject {
  /** The file's top-level `name:`, if any (Persys names the project itself; see the workload spec). */
  readonly name?: string;
  /** Enabled services (profiles applied), in dependency order: every service after what it depends on. */
  readonly services: readonly ComposeService[];
  /** Services left out by the active profiles. */
  readonly disabledServices: readonly string[];
  readonly networks: readonly ComposeNetwork[];
  readonly volumes: readonly ComposeVolume[];
  readonly warnings: readonly ComposeWarning[];
}
