/**
 * The unsupported-key rule (docs/compose.md): every key of a Compose file is in exactly one of three
 * classes.
 *
 * - supported: Persys acts on it;
 * - ignored: Persys reads it and knowingly does nothing (it does not change what runs or how it is
 *   reached, or Persys does that part itself); the parse result carries a warning naming it;
 * - anything else — a Compose key Persys does not implement, or a typo — is an INVALID_SPEC error
 *   naming the key, so nothing the user asked for is silently dropped.
 *
 * Keys starting with `x-` are Compose extension fields and are always allowed.
 */

export type KeyClass = "supported" | { readonly ignored: string };

type KeyTable = Readonly<Record<string, KeyClass>>;

const S = "supported" as const;
const ignored = (why: string): KeyClass => ({ ignored: why });

export const topLevelKeys: KeyTable = {
  services: S,
  networks: S,
  volumes: S,
  name: S,
  version: ignored("the top-level version is obsolete and has no effect"),
};

export const serviceKeys: KeyTable = {
  image: S,
  command: S,
  entrypoint: S,
  environment: S,
  env_file: S,
  ports: S,
  expose: S,
  depends_on: S,
  healthcheck: S,
  restart: S,
  deploy: S,
  labels: S,
  volumes: S,
  networks: S,
  network_mode: S,
  working_dir: S,
  user: S,
  hostname: S,
  profiles: S,
  stop_grace_period: S,
  stop_signal: S,
  tty: S,
  stdin_open: S,
  privileged: S,
  init: S,
  read_only: S,
  cap_add: S,
  cap_drop: S,
  extra_hosts: S,
  tmpfs: S,
  mem_limit: S,
  mem_reservation: S,
  cpus: S,
  scale: S,
  container_name: ignored("Persys names containers <project>-<service>-<number>"),
  build: ignored("nodes do not build images; the service's image is used"),
  logging: ignored("containers use the agent's log driver and rotation"),
  pull_policy: ignored("images are pulled only when absent from the node"),
  links: ignored("services reach each other by service name on the project network"),
};

export const deployKeys: KeyTable = {
  replicas: S,
  resources: S,
  restart_policy: S,
  mode: S,
  labels: ignored("deploy.labels are Swarm service labels; use the service's labels"),
  update_config: ignored("Persys recreates changed services one at a time by itself"),
  rollback_config: ignored("Persys does not roll back services"),
  placement: ignored("the whole stack is placed on one node by the Persys scheduler"),
  endpoint_mode: ignored("services are reached by name on the project network"),
};

export const resourceKeys: KeyTable = { cpus: S, memory: S };

export const restartPolicyKeys: KeyTable = {
  condition: S,
  max_attempts: S,
  delay: ignored("restarts back off as Docker does"),
  window: ignored("restarts back off as Docker does"),
};

export const healthcheckKeys: KeyTable = {
  test: S,
  interval: S,
  timeout: S,
  retries: S,
  start_period: S,
  disable: S,
  start_interval: ignored("not supported by the node's Docker Engine API version"),
};

export const networkKeys: KeyTable = {
  driver: S,
  driver_opts: S,
  external: S,
  name: S,
  labels: S,
  internal: S,
  attachable: ignored("project networks are local bridge networks"),
};

export const volumeKeys: KeyTable = { driver: S, driver_opts: S, external: S, name: S, labels: S };

export const serviceNetworkKeys: KeyTable = {
  aliases: S,
  ipv4_address: ignored("addresses are assigned by Docker"),
  ipv6_address: ignored("addresses are assigned by Docker"),
  priority: ignored("network order does not matter on a single node"),
};

export const dependencyKeys: KeyTable = { condition: S, required: S, restart: S };
