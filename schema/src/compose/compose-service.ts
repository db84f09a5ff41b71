import {
  dependencyKeys,
  deployKeys,
  healthcheckKeys,
  resourceKeys,
  restartPolicyKeys,
  serviceKeys,
  serviceNetworkKeys,
} from "./compose-keys.js";
import type {
  ComposeDependency,
  ComposeHealthcheck,
  ComposeMount,
  ComposePort,
  ComposeResources,
  ComposeRestart,
  ComposeService,
  ComposeServiceNetwork,
  DependencyCondition,
} from "./compose-model.js";
import type { ComposeReader, Raw } from "./compose-reader.js";
import { parseBytes, parseCpus, parseDuration, parseMount, parsePorts, show } from "./compose-values.js";
import { parseDotenv } from "./dotenv.js";

/** What a service normaliser needs besides the service's own mapping. */
export interface ServiceContext {
  readonly reader: ComposeReader;
  /** Interpolation variables (`environment: [KEY]` without a value reads from here). */
  readonly env: Readonly<Record<string, string>>;
  readonly projectDir: string | undefined;
  readonly readFile: ((path: string) => string | undefined) | undefined;
}

const conditions = new Set<DependencyCondition>([
  "service_started",
  "service_healthy",
  "service_completed_successfully",
]);
const restarts = new Set<ComposeRestart>(["no", "always", "on-failure", "unless-stopped"]);

/** Normalises one service mapping (already interpolated). Problems are recorded on the reader. */
export function readService(name: string, raw: Raw, ctx: ServiceContext): ComposeService {
  const r = ctx.reader;
  const at = `services.${name}`;
  const p = (key: string) => `${at}.${key}`;
  r.keys(raw, serviceKeys, at);
  const image = r.string(raw.image, p("image"));
  if (!image) r.fail(p("image"), raw.build ? "is required: nodes do not build images" : "is required");
  else if (/\s/.test(image)) r.fail(p("image"), `must not contain whitespace, got ${show(image)}`);
  const deploy = readDeploy(raw, ctx, at);
  const ports: ComposePort[] = [];
  if (raw.ports !== undefined && !Array.isArray(raw.ports)) r.fail(p("ports"), "must be a list");
  for (const [i, entry] of (Array.isArray(raw.ports) ? raw.ports : []).entries()) {
    ports.push(...r.parsed(parsePorts(entry), `${p("ports")}[${i}]`, []));
  }
  const onFailure = /^on-failure:(\d+)$/.exec(String(raw.restart ?? ""));
  const restart = onFailure
    ? "on-failure"
    : (r.string(raw.restart, p("restart"), deploy.restart ?? "no") as ComposeRestart);
  if (!restarts.has(restart)) {
    r.fail(p("restart"), `must be no, always, on-failure[:N] or unless-stopped, got ${show(restart)}`);
  }
  const networkMode = r.string(raw.network_mode, p("network_mode"));
  if (networkMode && networkMode !== "host" && networkMode !== "none" && networkMode !== "bridge") {
    r.fail(p("network_mode"), `must be bridge, host or none, got ${show(networkMode)}`);
  }
  const grace =
    raw.stop_grace_period === undefined
      ? 10_000
      : r.parsed(parseDuration(raw.stop_grace_period), p("stop_grace_period"), 10_000);
  const healthcheck = readHealthcheck(raw.healthcheck, ctx, p("healthcheck"));
  return {
    name,
    image,
    ...optional("command", r.command(raw.command, p("command"))),
    ...optional("entrypoint", r.command(raw.entrypoint, p("entrypoint"))),
    environment: {
      ...readEnvFiles(raw.env_file, ctx, p("env_file")),
      ...r.dict(raw.environment, p("environment"), (k) => ctx.env[k]),
    },
    ports,
    expose: r.strings(raw.expose, p("expose")).map(String),
    dependsOn: readDependsOn(raw.depends_on, ctx, p("depends_on")),
    ...(healthcheck ? { healthcheck } : {}),
    restart,
    restartMaxRetries: onFailure ? Number(onFailure[1]) : deploy.maxAttempts,
    replicas: deploy.replicas ?? r.integer(raw.scale, p("scale"), 1),
    limits: {
      cpus: deploy.limits.cpus || (raw.cpus === undefined ? 0 : r.parsed(parseCpus(raw.cpus), p("cpus"), 0)),
      memoryBytes:
        deploy.limits.memoryBytes ||
        (raw.mem_limit === undefined ? 0 : r.parsed(parseBytes(raw.mem_limit), p("mem_limit"), 0)),
    },
    reservations: {
      cpus: deploy.reservations.cpus,
      memoryBytes:
        deploy.reservations.memoryBytes ||
        (raw.mem_reservation === undefined ? 0 : r.parsed(parseBytes(raw.mem_reservation), p("mem_reservation"), 0)),
    },
    labels: r.dict(raw.labels, p("labels")),
    volumes: readMounts(raw.volumes, ctx, p("volumes")),
    networks: readServiceNetworks(raw.networks, ctx, p("networks"), networkMode),
    networkMode: networkMode === "host" || networkMode === "none" ? networkMode : "",
    workingDir: r.string(raw.working_dir, p("working_dir")),
    user: r.string(raw.user, p("user")),
    hostname: r.string(raw.hostname, p("hostname")),
    stopGracePeriodMs: grace,
    stopSignal: r.string(raw.stop_signal, p("stop_signal")),
    tty: r.boolean(raw.tty, p("tty")),
    stdinOpen: r.boolean(raw.stdin_open, p("stdin_open")),
    privileged: r.boolean(raw.privileged, p("privileged")),
    init: r.boolean(raw.init, p("init")),
    readOnly: r.boolean(raw.read_only, p("read_only")),
    capAdd: r.strings(raw.cap_add, p("cap_add")),
    capDrop: r.strings(raw.cap_drop, p("cap_drop")),
    extraHosts: Array.isArray(raw.extra_hosts)
      ? r.strings(raw.extra_hosts, p("extra_hosts"))
      : Object.entries(r.dict(raw.extra_hosts, p("extra_hosts"))).map(([h, ip]) => `${h}:${ip}`),
    tmpfs: r.strings(raw.tmpfs, p("tmpfs")),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

interface Deploy {
  replicas: number | undefined;
  limits: ComposeResources;
  reservations: ComposeResources;
  restart: ComposeRestart | undefined;
  maxAttempts: number;
}

function readDeploy(raw: Raw, ctx: ServiceContext, at: string): Deploy {
  const r = ctx.reader;
  const path = `${at}.deploy`;
  const d = r.map(raw.deploy, path) ?? {};
  r.keys(d, deployKeys, path);
  if (d.mode !== undefined && d.mode !== "replicated")
    r.fail(`${path}.mode`, `must be replicated, got ${show(d.mode)}: a stack runs on one node`);
  const resources = r.map(d.resources, `${path}.resources`) ?? {};
  for (const key of Object.keys(resources)) {
    if (key !== "limits" && key !== "reservations" && !key.startsWith("x-"))
      r.fail(`${path}.resources.${key}`, `unsupported key "${key}" (limits or reservations)`);
  }
  const res = (key: "limits" | "reservations"): ComposeResources => {
    const rp = `${path}.resources.${key}`;
    const m = r.map(resources[key], rp) ?? {};
    r.keys(m, resourceKeys, rp);
    return {
      cpus: m.cpus === undefined ? 0 : r.parsed(parseCpus(m.cpus), `${rp}.cpus`, 0),
      memoryBytes: m.memory === undefined ? 0 : r.parsed(parseBytes(m.memory), `${rp}.memory`, 0),
    };
  };
  const policy = r.map(d.restart_policy, `${path}.restart_policy`) ?? {};
  r.keys(policy, restartPolicyKeys, `${path}.restart_policy`);
  const condition = r.string(policy.condition, `${path}.restart_policy.condition`, "");
  const mapped: Record<string, ComposeRestart> = { none: "no", "on-failure": "on-failure", any: "always" };
  if (condition && !mapped[condition])
    r.fail(`${path}.restart_policy.condition`, `must be none, on-failure or any, got ${show(condition)}`);
  return {
    replicas: d.replicas === undefined ? undefined : r.integer(d.replicas, `${path}.replicas`, 1),
    limits: res("limits"),
    reservations: res("reservations"),
    restart: condition ? mapped[condition] : undefined,
    maxAttempts: r.integer(policy.max_attempts, `${path}.restart_policy.max_attempts`, 0),
  };
}

function readHealthcheck(value: unknown, ctx: ServiceContext, path: string): ComposeHealthcheck | undefined {
  const r = ctx.reader;
  if (value === undefined || value === null) return undefined;
  const h = r.map(value, path);
  if (!h) return undefined;
  r.keys(h, healthcheckKeys, path);
  const dur = (key: string) => (h[key] === undefined ? 0 : r.parsed(parseDuration(h[key]), `${path}.${key}`, 0));
  let test: string[];
  if (r.boolean(h.disable, `${path}.disable`)) test = ["NONE"];
  else if (typeof h.test === "string") test = ["CMD-SHELL", h.test];
  else if (Array.isArray(h.test)) {
    test = r.strings(h.test, `${path}.test`);
    if (!["CMD", "CMD-SHELL", "NONE"].includes(test[0] ?? "")) {
      r.fail(`${path}.test`, `a list must start with CMD, CMD-SHELL or NONE, got ${show(test[0])}`);
    } else if (test[0] !== "NONE" && test.length < 2) r.fail(`${path}.test`, "needs a command after " + test[0]);
  } else {
    r.fail(
      `${path}.test`,
      h.test === undefined ? "is required (or disable: true)" : `must be a string or a list, got ${show(h.test)}`,
    );
    test = ["NONE"];
  }
  return {
    test,
    intervalMs: dur("interval"),
    timeoutMs: dur("timeout"),
    startPeriodMs: dur("start_period"),
    retries: r.integer(h.retries, `${path}.retries`, 0),
  };
}

function readDependsOn(value: unknown, ctx: ServiceContext, path: string): Record<string, ComposeDependency> {
  const r = ctx.reader;
  const out: Record<string, ComposeDependency> = {};
  if (value === undefined || value === null) return out;
  if (Array.isArray(value)) {
    value.forEach((name, i) => {
      out[r.string(name, `${path}[${i}]`)] = { condition: "service_started", required: true, restart: false };
    });
    return out;
  }
  const m = r.map(value, path) ?? {};
  for (const [name, spec] of Object.entries(m)) {
    const sp = `${path}.${name}`;
    const d = r.map(spec, sp) ?? {};
    r.keys(d, dependencyKeys, sp);
    const condition = r.string(d.condition, `${sp}.condition`, "service_started") as DependencyCondition;
    if (!conditions.has(condition)) {
      r.fail(
        `${sp}.condition`,
        `must be service_started, service_healthy or service_completed_successfully, got ${show(condition)}`,
      );
    }
    out[name] = {
      condition,
      required: r.boolean(d.required, `${sp}.required`, true),
      restart: r.boolean(d.restart, `${sp}.restart`),
    };
  }
  return out;
}

function readMounts(value: unknown, ctx: ServiceContext, path: string): ComposeMount[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    ctx.reader.fail(path, "must be a list");
    return [];
  }
  const out: ComposeMount[] = [];
  value.forEach((v, i) => {
    const m = ctx.reader.parsed(parseMount(v, ctx.projectDir), `${path}[${i}]`, undefined);
    if (m) out.push(m);
  });
  return out;
}

function readServiceNetworks(
  value: unknown,
  ctx: ServiceContext,
  path: string,
  networkMode: string,
): Record<string, ComposeServiceNetwork> {
  const r = ctx.reader;
  if (networkMode === "host" || networkMode === "none") {
    if (value !== undefined) r.fail(path, `cannot be set with network_mode ${networkMode}`);
    return {};
  }
  if (value === undefined || value === null) return { default: { aliases: [] } };
  if (Array.isArray(value)) return Object.fromEntries(r.strings(value, path).map((n) => [n, { aliases: [] }]));
  const out: Record<string, ComposeServiceNetwork> = {};
  for (const [name, spec] of Object.entries(r.map(value, path) ?? {})) {
    const m = r.map(spec, `${path}.${name}`) ?? {};
    r.keys(m, serviceNetworkKeys, `${path}.${name}`);
    out[name] = { aliases: r.strings(m.aliases, `${path}.${name}.aliases`) };
  }
  return out;
}

function readEnvFiles(value: unknown, ctx: ServiceContext, path: string): Record<string, string> {
  const r = ctx.reader;
  if (value === undefined || value === null) return {};
  const entries = (Array.isArray(value) ? value : [value]).map((v, i) => {
    const ip = Array.isArray(value) ? `${path}[${i}]` : path;
    if (v && typeof v === "object") {
      const m = v as Raw;
      return { file: r.string(m.path, `${ip}.path`), required: r.boolean(m.required, `${ip}.required`, true), ip };
    }
    return { file: r.string(v, ip), required: true, ip };
  });
  const env: Record<string, string> = {};
  for (const { file, required, ip } of entries) {
    if (!ctx.readFile) {
      r.fail(
        ip,
        `env_file "${file}" cannot be read: an inline compose file has no directory (use environment, or a git source)`,
      );
      continue;
    }
    const text = ctx.readFile(file);
    if (text === undefined) {
      if (required) r.fail(ip, `env_file "${file}" does not exist`);
      continue;
    }
    const parsed = parseDotenv(text, (k) => ctx.env[k]);
    if ("line" in parsed) r.fail(ip, `${file} line ${parsed.line}: ${parsed.reason}`);
    else Object.assign(env, parsed.env);
  }
  return env;
}
