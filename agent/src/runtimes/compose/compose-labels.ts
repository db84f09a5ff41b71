/**
 * The `com.docker.compose.*` labels Docker Compose itself puts on what it creates, so
 * `docker compose ls/ps` (and docker-compose 1.29 with the same file) recognise a Persys stack.
 */

/** The Compose version Persys claims in `com.docker.compose.version`. */
export const COMPOSE_VERSION = "1.29.2";

export const L = {
  project: "com.docker.compose.project",
  service: "com.docker.compose.service",
  number: "com.docker.compose.container-number",
  oneoff: "com.docker.compose.oneoff",
  hash: "com.docker.compose.config-hash",
  version: "com.docker.compose.version",
  workingDir: "com.docker.compose.project.working_dir",
  configFiles: "com.docker.compose.project.config_files",
  network: "com.docker.compose.network",
  volume: "com.docker.compose.volume",
  dependsOn: "com.docker.compose.depends_on",
} as const;

export interface ProjectIdentity {
  readonly project: string;
  /** Directory holding the effective compose file. */
  readonly workingDir: string;
  /** The compose file, absolute. */
  readonly configFile: string;
}

export function containerComposeLabels(
  p: ProjectIdentity,
  service: string,
  number: number,
  hash: string,
  dependsOn: readonly string[],
): Record<string, string> {
  return {
    [L.project]: p.project,
    [L.service]: service,
    [L.number]: String(number),
    [L.oneoff]: "False",
    [L.hash]: hash,
    [L.version]: COMPOSE_VERSION,
    [L.workingDir]: p.workingDir,
    [L.configFiles]: p.configFile,
    [L.dependsOn]: dependsOn.join(","),
  };
}

export function networkComposeLabels(project: string, key: string): Record<string, string> {
  return { [L.project]: project, [L.network]: key, [L.version]: COMPOSE_VERSION };
}

export function volumeComposeLabels(project: string, key: string): Record<string, string> {
  return { [L.project]: project, [L.volume]: key, [L.version]: COMPOSE_VERSION };
}
